/*
 * telemetry.c - NVML through dlopen (design in telemetry.h).
 *
 * NVML's header is not installed on the build machines, so the few entry
 * points used are declared here from NVML's documented C API (opaque device
 * handle, int return codes, NVML_SUCCESS == 0) and resolved with dlsym from
 * libnvidia-ml.so.1, the name the driver installs.  Each process keeps one
 * reference on nvmlInit_v2 per open telemetry object and releases it with
 * nvmlShutdown (NVML counts them).
 *
 * HIP builds (AORTA_HIP): the equivalent is ROCm SMI (librocm_smi64.so:
 * rsmi_init, rsmi_dev_gpu_clk_freq_get for RSMI_CLK_TYPE_SYS/MEM,
 * rsmi_dev_power_ave_get in uW, rsmi_dev_temp_metric_get in millidegrees,
 * rsmi_dev_busy_percent_get, rsmi_dev_memory_busy_percent_get).  It is not
 * written yet: the stub below reports "unavailable" with that reason.
 */
#include "gpu/telemetry.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/output.h"

#ifndef AORTA_HIP

typedef void *nvml_device;
typedef int nvml_ret;
#define NVML_OK 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMP_GPU 0

struct nvml_util { unsigned int gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };

struct telemetry {
	void *lib;
	nvml_device dev;
	int ok;
	char why[160];
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*errstr)(nvml_ret);
	nvml_ret (*by_pci)(const char *, nvml_device *);
	nvml_ret (*by_index)(unsigned int, nvml_device *);
	nvml_ret (*clock)(nvml_device, int, unsigned int *);
	nvml_ret (*power)(nvml_device, unsigned int *);
	nvml_ret (*temp)(nvml_device, int, unsigned int *);
	nvml_ret (*util)(nvml_device, struct nvml_util *);
	nvml_ret (*mem)(nvml_device, struct nvml_mem *);
};

/* dlsym into a function pointer without the object/function cast warning */
#define LOAD(t, field, sym) do { void *p_ = dlsym((t)->lib, sym); \
	memcpy(&(t)->field, &p_, sizeof(p_)); } while (0)

static const char *nvml_err(const struct telemetry *t, nvml_ret r)
{
	const char *s = t->errstr ? t->errstr(r) : NULL;
	return s ? s : "unknown NVML error";
}

struct telemetry *telemetry_open(const char *pci_bus_id, int index)
{
	struct telemetry *t = xcalloc(1, sizeof(*t));
	nvml_ret r;

	t->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!t->lib) {
		snprintf(t->why, sizeof(t->why), "libnvidia-ml.so.1 not loadable: %s", dlerror());
		return t;
	}
	LOAD(t, init, "nvmlInit_v2");
	LOAD(t, shutdown, "nvmlShutdown");
	LOAD(t, errstr, "nvmlErrorString");
	LOAD(t, by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
	LOAD(t, by_index, "nvmlDeviceGetHandleByIndex_v2");
	LOAD(t, clock, "nvmlDeviceGetClockInfo");
	LOAD(t, power, "nvmlDeviceGetPowerUsage");
	LOAD(t, temp, "nvmlDeviceGetTemperature");
	LOAD(t, util, "nvmlDeviceGetUtilizationRates");
	LOAD(t, mem, "nvmlDeviceGetMemoryInfo");
	if (!t->init || !t->shutdown || !t->by_index) {
		snprintf(t->why, sizeof(t->why), "libnvidia-ml.so.1 lacks nvmlInit_v2");
		dlclose(t->lib);
		t->lib = NULL;
		return t;
	}
	r = t->init();
	if (r != NVML_OK) {
		snprintf(t->why, sizeof(t->why), "nvmlInit_v2: %s", nvml_err(t, r));
		dlclose(t->lib);
		t->lib = NULL;
		return t;
	}
	r = -1;
	if (pci_bus_id && *pci_bus_id && t->by_pci)
		r = t->by_pci(pci_bus_id, &t->dev);
	if (r != NVML_OK) /* no bus id, or NVML spells it differently: NVML's index */
		r = t->by_index(index < 0 ? 0u : (unsigned)index, &t->dev);
	if (r != NVML_OK) {
		snprintf(t->why, sizeof(t->why), "nvml device %s: %s",
			 pci_bus_id && *pci_bus_id ? pci_bus_id : "by index", nvml_err(t, r));
		if (t->shutdown() != NVML_OK)
			aorta_warn("nvmlShutdown failed");
		dlclose(t->lib);
		t->lib = NULL;
		return t;
	}
	t->ok = 1;
	return t;
}

void telemetry_read(struct telemetry *t, struct gpu_telemetry *o)
{
	unsigned int v;
	struct nvml_util u;
	struct nvml_mem m;

	memset(o, 0, sizeof(*o));
	o->sm_clock_mhz = o->mem_clock_mhz = o->temp_c = o->gpu_util_pct = o->mem_util_pct = -1;
	o->mem_used_bytes = o->mem_total_bytes = -1;
	o->power_w = NAN;
	if (!t || !t->ok) {
		snprintf(o->why, sizeof(o->why), "%s", t ? t->why : "no telemetry object");
		return;
	}
	o->available = 1;
	/* each query may be unsupported on a device (NOT_SUPPORTED): the field stays unknown */
	if (t->clock && t->clock(t->dev, NVML_CLOCK_SM, &v) == NVML_OK)
		o->sm_clock_mhz = (int)v;
	if (t->clock && t->clock(t->dev, NVML_CLOCK_MEM, &v) == NVML_OK)
		o->mem_clock_mhz = (int)v;
	if (t->power && t->power(t->dev, &v) == NVML_OK)
		o->power_w = v / 1000.0;
	if (t->temp && t->temp(t->dev, NVML_TEMP_GPU, &v) == NVML_OK)
		o->temp_c = (int)v;
	if (t->util && t->util(t->dev, &u) == NVML_OK) {
		o->gpu_util_pct = (int)u.gpu;
		o->mem_util_pct = (int)u.memory;
	}
	if (t->mem && t->mem(t->dev, &m) == NVML_OK) {
		o->mem_used_bytes = (long long)m.used;
		o->mem_total_bytes = (long long)m.total;
	}
}

void telemetry_close(struct telemetry *t)
{
	if (!t)
		return;
	if (t->lib) {
		if (t->ok && t->shutdown() != NVML_OK)
			aorta_warn("nvmlShutdown failed");
		dlclose(t->lib);
	}
	free(t);
}

#else /* AORTA_HIP: ROCm SMI path, not written yet (see the top comment) */

struct telemetry { int unused; };

struct telemetry *telemetry_open(const char *pci_bus_id, int index)
{
	(void)pci_bus_id;
	(void)index;
	return xcalloc(1, sizeof(struct telemetry));
}

void telemetry_read(struct telemetry *t, struct gpu_telemetry *o)
{
	(void)t;
	memset(o, 0, sizeof(*o));
	o->sm_clock_mhz = o->mem_clock_mhz = o->temp_c = o->gpu_util_pct = o->mem_util_pct = -1;
	o->mem_used_bytes = o->mem_total_bytes = -1;
	o->power_w = NAN;
	snprintf(o->why, sizeof(o->why), "rocm smi telemetry not implemented");
}

void telemetry_close(struct telemetry *t)
{
	free(t);
}

#endif

static void int_or_null(struct jw *w, const char *k, long long v)
{
	if (v < 0)
		jw_null(w, k);
	else
		jw_int(w, k, v);
}

void telemetry_write_json(const struct gpu_telemetry *g, struct jw *w)
{
	jw_obj(w, "telemetry");
	jw_bool(w, "available", g->available);
	if (!g->available) {
		jw_str(w, "why", g->why);
	} else {
		int_or_null(w, "sm_clock_mhz", g->sm_clock_mhz);
		int_or_null(w, "mem_clock_mhz", g->mem_clock_mhz);
		jw_num(w, "power_w", g->power_w, 3);
		int_or_null(w, "temp_c", g->temp_c);
		int_or_null(w, "gpu_util_pct", g->gpu_util_pct);
		int_or_null(w, "mem_util_pct", g->mem_util_pct);
		int_or_null(w, "mem_used_bytes", g->mem_used_bytes);
		int_or_null(w, "mem_total_bytes", g->mem_total_bytes);
	}
	jw_obj_end(w);
}
