/*
 * telemetry.h - per-device clocks, power, temperature, utilisation and
 * memory: NVML on NVIDIA builds, ROCm SMI on HIP builds (AORTA_HIP), the
 * same struct and JSON for both.
 *
 * The library is loaded at run time (dlopen), so the binary has no link
 * dependency on it and runs where it is missing: telemetry is then
 * "unavailable" with the reason, never an error.  A field the device does
 * not report is -1 (integers) or NaN (power) and is written as null.
 *
 * Cost: each telemetry_read is a handful of library calls, tens of
 * microseconds with NVML (ROCm SMI reads sysfs files: more, still well
 * under a millisecond); call it once per step or less, never inside a
 * timed range.  ROCm SMI's library is librocm_smi64.so (ROCm, Debian) or
 * the path in AORTA_ROCM_SMI_LIB.
 * Thread safety: one struct telemetry per thread (NVML and ROCm SMI are
 * thread-safe).
 */
#ifndef AORTA_TELEMETRY_H
#define AORTA_TELEMETRY_H

#include <stdint.h>

struct jw;

struct gpu_telemetry {
	int available;           /* 0: nothing below is meaningful; see why */
	char why[160];           /* reason when unavailable, "" otherwise */
	int sm_clock_mhz, mem_clock_mhz;
	double power_w;          /* NVML reports mW, ROCm SMI uW */
	int temp_c;
	int gpu_util_pct, mem_util_pct;
	long long mem_used_bytes, mem_total_bytes;
};

struct telemetry;

/* Opens telemetry for the device at PCI bus id pci_bus_id ("0000:18:00.0",
 * as gpu_device_info gives; robust to CUDA_VISIBLE_DEVICES reordering);
 * NULL (or a bus id the library does not list) falls back to the library's
 * device index `index`.  Always returns an object (never
 * NULL); when the library or device is missing it reads as unavailable. */
struct telemetry *telemetry_open(const char *pci_bus_id, int index);
void telemetry_read(struct telemetry *t, struct gpu_telemetry *out);
void telemetry_close(struct telemetry *t);

/* Writes "telemetry": {available, sm_clock_mhz, mem_clock_mhz, power_w,
 * temp_c, gpu_util_pct, mem_util_pct, mem_used_bytes, mem_total_bytes}
 * (or {available: false, why}) into the current JSON object. */
void telemetry_write_json(const struct gpu_telemetry *g, struct jw *w);

#endif
