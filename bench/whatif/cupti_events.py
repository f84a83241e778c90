"""cupti_events.py - cudaEventRecord's CUPTI records turned on while the
PyTorch profiler records, so Kineto names each stream wait's stream and
event record (wait_on_stream, wait_on_cuda_event_record_corr_id).

CUPTI 13 no longer delivers those records (CUPTI_ACTIVITY_KIND_CUDA_EVENT,
36) with the synchronisation records Kineto enables for
enable_cuda_sync_events, and Kineto never enables them itself, so without
this every wait comes out with -1 (pytorch/kineto#1552, open; docs/metrics.md
"Where a dependency comes from").  Used by sync_events_trace.py and
make_fixtures.py --sync-events.
"""
import ctypes

from torch.profiler import ProfilerAction

CUPTI_ACTIVITY_KIND_CUDA_EVENT = 36


def record_events(prof):
    """Before a step: kind 36 on, on the libcupti this process has loaded,
    while prof records (warm-up and active steps; after the profiler has
    started, as Kineto's own enable would not keep it).  Returns whether it
    was turned on."""
    if prof.current_action == ProfilerAction.NONE:
        return False
    with open("/proc/self/maps") as f:
        libs = [l.split()[-1] for l in f if "libcupti" in l and l.split()[-1].startswith("/")]
    return bool(libs) and ctypes.CDLL(libs[0]).cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT) == 0
