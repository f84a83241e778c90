/*
 * telemetry.h - per-device clocks, power, temperature and utilisation
 * (NVML on NVIDIA; a ROCm SMI path is stubbed for HIP builds).
 *
 * The library is loaded at run time (dlopen), so the binary has no link
 * dependency on it and runs where it is missing: telemetry is then
 * "unavailable" with the reason, never an error.  A field the device does
 * not report is -1 (integers) or NaN (power) and is written as null.
 *
 * Cost: each telemetry_read is a handful of NVML calls, tens of
 * microseconds; call it once per step or less, never inside a timed range.
 * Thread safety: one struct telemetry per thread (NVML itself is
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
	double power_w;          /* NVML reports mW */
	int temp_c;
	int gpu_util_pct, mem_util_pct;
	long long mem_used_bytes, mem_total_bytes;
};

struct telemetry;

/* Opens telemetry for the device at PCI bus id pci_bus_id ("0000:18:00.0",
 * as gpu_device_info gives; robust to CUDA_VISIBLE_DEVICES reordering);
 * NULL falls back to NVML index `index`.  Always returns an object (never
 * NULL); when the library or device is missing it reads as unavailable. */
struct telemetry *telemetry_open(const char *pci_bus_id, int index);
void telemetry_read(struct telemetry *t, struct gpu_telemetry *out);
void telemetry_close(struct telemetry *t);

/* Writes "telemetry": {available, sm_clock_mhz, mem_clock_mhz, power_w,
 * temp_c, gpu_util_pct, mem_util_pct, mem_used_bytes, mem_total_bytes}
 * (or {available: false, why}) into the current JSON object. */
void telemetry_write_json(const struct gpu_telemetry *g, struct jw *w);

#endif
