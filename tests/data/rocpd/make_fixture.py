#!/usr/bin/env python3
"""make_fixture.py - builds small_results.db, a small rocprofv3 rocpd database.

No public rocpd database could be obtained (see ../shared/data/README.md), so
this fixture is made from the documented rocpd schema, version 3 (ROCm 7;
ROCm/rocm-systems projects/rocprofiler-sdk/source/share/rocprofiler-sdk-rocpd/
rocpd_tables.sql and rocpd_views.sql).  Only the facts are used, written here
afresh: real tables are named rocpd_<name>_<uuid> (a UUIDv7 with '-' turned
into '_'), every row carries the writer's guid, the "pid" / "tid" / "agent_id"
/ "kernel_id" columns of data tables are row ids into rocpd_info_process /
_thread / _agent / _kernel_symbol, and plain-named views select * from the
suffixed tables.  Only the tables aorta reads, plus those the official
`kernels` / `regions` views join, are created, with the columns they use.

Contents (one process, OS pid 4242; agents: 1 CPU, 2 GPUs):
  markers  ProfilerStep#5, #6, #7 (MARKER_CORE_API), 1 ms each from T0+1 ms
  GPU 0    per step: a hipBLASLt GEMM, an RCCL kernel, a fill kernel (9)
           copies: H2D 1 MiB, D2H 4 KiB, P2P GPU0->GPU1 16 MiB
  GPU 1    per step: a GEMM and an RCCL kernel (6), plus one dispatch that
           ends before it starts (skipped); copy: D2D 8 MiB
  every dispatch has a HIP API region with the same correlation id.

Run:  python3 tests/data/rocpd/make_fixture.py [out.db]
"""
import os
import sqlite3
import sys

UUID = "_0195f2c4_7a1b_7c3e_9d2a_4b5c6d7e8f90"
GUID = "0195f2c4-7a1b-7c3e-9d2a-4b5c6d7e8f90"
T0 = 1_700_000_000_000_000_000 // 1000  # ns on the host clock, arbitrary

TABLES = {
    "metadata": "id INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL, value TEXT NOT NULL",
    "string": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, string TEXT NOT NULL UNIQUE",
    "info_node": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, hash BIGINT NOT NULL,"
                 " machine_id TEXT NOT NULL, hostname TEXT",
    "info_process": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                    " ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, start BIGINT,"
                    " \"end\" BIGINT, command TEXT",
    "info_thread": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                   " ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT",
    "info_agent": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                  " pid INTEGER NOT NULL, type TEXT CHECK (type IN ('CPU', 'GPU')),"
                  " absolute_index INTEGER, logical_index INTEGER, type_index INTEGER,"
                  " name TEXT, product_name TEXT",
    "info_queue": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                  " pid INTEGER NOT NULL, name TEXT",
    "info_stream": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                   " pid INTEGER NOT NULL, name TEXT",
    "info_code_object": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                        " pid INTEGER NOT NULL, agent_id INTEGER, uri TEXT",
    "info_kernel_symbol": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                          " pid INTEGER NOT NULL, code_object_id INTEGER NOT NULL, kernel_name TEXT,"
                          " display_name TEXT",
    "event": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, category_id INTEGER,"
             " stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER",
    "region": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
              " pid INTEGER NOT NULL, tid INTEGER NOT NULL, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL,"
              " name_id INTEGER NOT NULL, event_id INTEGER",
    "kernel_dispatch": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                       " pid INTEGER NOT NULL, tid INTEGER, agent_id INTEGER NOT NULL,"
                       " kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL,"
                       " queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL,"
                       " start BIGINT NOT NULL, \"end\" BIGINT NOT NULL,"
                       " workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL,"
                       " workgroup_size_z INTEGER NOT NULL, grid_size_x INTEGER NOT NULL,"
                       " grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL,"
                       " region_name_id INTEGER, event_id INTEGER",
    "memory_copy": "id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL, nid INTEGER NOT NULL,"
                   " pid INTEGER NOT NULL, tid INTEGER, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL,"
                   " name_id INTEGER NOT NULL, dst_agent_id INTEGER, src_agent_id INTEGER,"
                   " size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER,"
                   " region_name_id INTEGER, event_id INTEGER",
}


class Db:
    def __init__(self, path):
        self.c = sqlite3.connect(path)
        self.c.execute("PRAGMA page_size = 1024")  # keeps the committed file small
        for name, cols in TABLES.items():
            self.c.execute(f'CREATE TABLE "rocpd_{name}{UUID}" ({cols})')
            self.c.execute(f'CREATE VIEW "rocpd_{name}" AS SELECT * FROM "rocpd_{name}{UUID}"')
        self.strings = {}

    def ins(self, table, **kw):
        if table != "metadata":
            kw.setdefault("guid", GUID)
        cols = ", ".join(f'"{k}"' for k in kw)
        qs = ", ".join("?" for _ in kw)
        cur = self.c.execute(f'INSERT INTO "rocpd_{table}{UUID}" ({cols}) VALUES ({qs})',
                             list(kw.values()))
        return cur.lastrowid

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = self.ins("string", string=text)
        return self.strings[text]


def build(path):
    if os.path.exists(path):
        os.remove(path)
    d = Db(path)
    for tag, value in (("schema_version", "3"), ("uuid", UUID), ("guid", GUID)):
        d.ins("metadata", tag=tag, value=value)
    nid = d.ins("info_node", hash=12345, machine_id="aorta-fixture-node", hostname="fixture")
    proc = d.ins("info_process", nid=nid, ppid=1, pid=4242, init=T0, fini=T0 + 10_000_000,
                 start=T0, end=T0 + 10_000_000, command="python3 train.py")
    th = d.ins("info_thread", nid=nid, ppid=1, pid=proc, tid=4242, name="python3")
    cpu = d.ins("info_agent", nid=nid, pid=proc, type="CPU", absolute_index=0, logical_index=0,
                type_index=0, name="AMD EPYC 9575F", product_name="AMD EPYC 9575F")
    gpu = [d.ins("info_agent", nid=nid, pid=proc, type="GPU", absolute_index=1 + i,
                 logical_index=1 + i, type_index=i, name="gfx950",
                 product_name="AMD Instinct MI355X") for i in range(2)]
    queue = [d.ins("info_queue", nid=nid, pid=proc, name=f"queue {i}") for i in range(2)]
    stream = [d.ins("info_stream", nid=nid, pid=proc, name=f"stream {i}") for i in range(3)]
    co = d.ins("info_code_object", nid=nid, pid=proc, agent_id=gpu[0], uri="file:///opt/rocm/lib/x.co")
    syms = {}
    for key, kname, disp in (
            ("gemm", "Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x1_SN_1LDSB1.kd",
             "Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x1_SN_1LDSB1"),
            ("nccl", "ncclDevKernel_Generic_1.kd", "ncclDevKernel_Generic_1"),
            ("fill", "_ZN2at6native29vectorized_elementwise_kernel.kd",
             "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")):
        syms[key] = d.ins("info_kernel_symbol", nid=nid, pid=proc, code_object_id=co,
                          kernel_name=kname, display_name=disp)
    cat_hip, cat_marker = d.s("HIP_RUNTIME_API_EXT"), d.s("MARKER_CORE_API")
    cat_kd, cat_mc = d.s("KERNEL_DISPATCH"), d.s("MEMORY_COPY")
    corr = [0]

    def region(name, start, end, cat):
        corr[0] += 1
        ev = d.ins("event", category_id=cat, stack_id=corr[0], parent_stack_id=0,
                   correlation_id=corr[0])
        d.ins("region", nid=nid, pid=proc, tid=th, start=start, end=end, name_id=d.s(name),
              event_id=ev)
        return corr[0]

    def dispatch(g, sym, launch, start, end, api="hipLaunchKernel"):
        c = region(api, launch, launch + 5_000, cat_hip)
        ev = d.ins("event", category_id=cat_kd, stack_id=c, parent_stack_id=0, correlation_id=c)
        d.ins("kernel_dispatch", nid=nid, pid=proc, tid=th, agent_id=gpu[g], kernel_id=syms[sym],
              dispatch_id=c, queue_id=queue[g], stream_id=stream[g if sym != "nccl" else 2],
              start=start, end=end, workgroup_size_x=256, workgroup_size_y=1, workgroup_size_z=1,
              grid_size_x=65536, grid_size_y=1, grid_size_z=1, region_name_id=d.s(api),
              event_id=ev)

    def copy(name, src, dst, size, launch, start, end, stream_id):
        c = region("hipMemcpyAsync", launch, launch + 3_000, cat_hip)
        ev = d.ins("event", category_id=cat_mc, stack_id=c, parent_stack_id=0, correlation_id=c)
        d.ins("memory_copy", nid=nid, pid=proc, tid=th, start=start, end=end, name_id=d.s(name),
              dst_agent_id=dst, src_agent_id=src, size=size, queue_id=None, stream_id=stream_id,
              region_name_id=d.s("hipMemcpyAsync"), event_id=ev)

    ms = 1_000_000
    for k, step in enumerate((5, 6, 7)):
        s0 = T0 + (k + 1) * ms
        region(f"ProfilerStep#{step}", s0, s0 + ms, cat_marker)
        # GPU 0: GEMM 300 us, RCCL 400 us overlapping it, fill 10 us
        dispatch(0, "gemm", s0 + 10_000, s0 + 100_000, s0 + 400_000, "hipExtModuleLaunchKernel")
        dispatch(0, "nccl", s0 + 20_000, s0 + 200_000, s0 + 600_000)
        dispatch(0, "fill", s0 + 30_000, s0 + 650_000, s0 + 660_000)
        # GPU 1: GEMM 250 us, RCCL 300 us
        dispatch(1, "gemm", s0 + 40_000, s0 + 120_000, s0 + 370_000, "hipExtModuleLaunchKernel")
        dispatch(1, "nccl", s0 + 50_000, s0 + 380_000, s0 + 680_000)
    # a malformed dispatch: ends before it starts
    dispatch(1, "fill", T0 + 4 * ms + 10_000, T0 + 4 * ms + 90_000, T0 + 4 * ms + 80_000)
    copy("MEMORY_COPY_HOST_TO_DEVICE", cpu, gpu[0], 1 << 20, T0 + 1_000, T0 + 10_000, T0 + 60_000, stream[0])
    copy("MEMORY_COPY_DEVICE_TO_HOST", gpu[0], cpu, 4096, T0 + 4 * ms + 100_000,
         T0 + 4 * ms + 110_000, T0 + 4 * ms + 115_000, stream[0])
    copy("MEMORY_COPY_DEVICE_TO_DEVICE", gpu[1], gpu[1], 8 << 20, T0 + 2_000, T0 + 20_000,
         T0 + 30_000, stream[1])
    copy("MEMORY_COPY_DEVICE_TO_DEVICE", gpu[0], gpu[1], 16 << 20, T0 + 3_000, T0 + 70_000,
         T0 + 150_000, stream[0])
    d.c.commit()
    d.c.execute("VACUUM")
    d.c.close()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    build(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "small_results.db"))
