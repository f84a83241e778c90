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
 * HIP builds (AORTA_HIP): ROCm SMI, compiled against the installed
 * <rocm_smi/rocm_smi.h> (its declarations give the pointer types) and
 * loaded the same way from librocm_smi64.so: rsmi_init/rsmi_shut_down
 * (reference counted like NVML's), the device found by PCI bus id
 * (rsmi_dev_pci_id_get) else by index; per read the current SYS and MEM
 * clocks (rsmi_dev_gpu_clk_freq_get, Hz), average power (uW; ROCm 6's
 * current socket power where the average is not supported), edge
 * temperature (else junction; millidegrees), GPU and memory busy percent
 * and VRAM used/total: what `rocm-smi --showtemp --showuse --showpower
 * --showmemuse` prints, in the same struct and JSON as NVML's.
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

#else /* AORTA_HIP: ROCm SMI */

#include <stddef.h>
#include <stdint.h>

#include <rocm_smi/rocm_smi.h>

/* ROCm 6 added rsmi_dev_current_socket_power_get (instant socket power,
 * uW), the only power reading of MI300 parts, where the average is not
 * supported; the 5.2 header lacks it, so its type is written here from
 * ROCm 6's rocm_smi.h and the symbol is optional. */
typedef rsmi_status_t (*rsmi_socket_power_fn)(uint32_t dv_ind, uint64_t *socket_power);

struct telemetry {
	void *lib;
	char lib_name[64];
	uint32_t dev;
	int ok;
	int major;               /* rsmi_version_get's, for rsmi_frequencies_t's layout */
	char why[160];
	/* the header's own declarations give the pointer types */
	__typeof__(rsmi_init) *init;
	__typeof__(rsmi_shut_down) *shutdown;
	__typeof__(rsmi_status_string) *errstr;
	__typeof__(rsmi_version_get) *version;
	__typeof__(rsmi_num_monitor_devices) *count;
	__typeof__(rsmi_dev_pci_id_get) *pci;
	__typeof__(rsmi_dev_gpu_clk_freq_get) *clock;
	__typeof__(rsmi_dev_power_ave_get) *power;
	rsmi_socket_power_fn socket_power;
	__typeof__(rsmi_dev_temp_metric_get) *temp;
	__typeof__(rsmi_dev_busy_percent_get) *busy;
	__typeof__(rsmi_dev_memory_busy_percent_get) *mem_busy;
	__typeof__(rsmi_dev_memory_usage_get) *mem_used;
	__typeof__(rsmi_dev_memory_total_get) *mem_total;
};

#define LOAD(t, field, sym) do { void *p_ = dlsym((t)->lib, sym); \
	memcpy(&(t)->field, &p_, sizeof(p_)); } while (0)

static const char *rsmi_err(const struct telemetry *t, rsmi_status_t r)
{
	const char *s = NULL;

	if (!t->errstr || t->errstr(r, &s) != RSMI_STATUS_SUCCESS || !s)
		return "unknown ROCm SMI error";
	return s;
}

/* The library: AORTA_ROCM_SMI_LIB when set (a name or a path, and then only
 * that), else the names ROCm and Debian install, then ROCm's default
 * prefix.  On failure why says what was tried and dlerror's reason. */
static int rsmi_load(struct telemetry *t)
{
	static const char *const names[] = {
		"librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
		"librocm_smi64.so.1", "/opt/rocm/lib/librocm_smi64.so", NULL
	};
	const char *env = getenv("AORTA_ROCM_SMI_LIB");
	char first[96] = "";

	if (env && *env) {
		t->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!t->lib) {
			snprintf(t->why, sizeof(t->why), "AORTA_ROCM_SMI_LIB=%s not loadable: %s", env, dlerror());
			return 0;
		}
		snprintf(t->lib_name, sizeof(t->lib_name), "%s", env);
		return 1;
	}
	for (int i = 0; names[i]; i++) {
		t->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (t->lib) {
			snprintf(t->lib_name, sizeof(t->lib_name), "%s", names[i]);
			return 1;
		}
		if (i == 0)
			snprintf(first, sizeof(first), "%s", dlerror());
	}
	snprintf(t->why, sizeof(t->why), "ROCm SMI not loadable (librocm_smi64.so[.7|.6|.5|.1], /opt/rocm/lib): %s",
		 first);
	return 0;
}

static void rsmi_unload(struct telemetry *t)
{
	dlclose(t->lib);
	t->lib = NULL;
}

/* "0000:18:00.0" -> ROCm SMI's BDF id: domain in bits 63..32, bus 15..8,
 * device 7..3, function 2..0 (ROCm 6 puts a partition id in 31..28, which
 * the comparison ignores) */
static int parse_bdf(const char *s, uint64_t *bdf)
{
	unsigned dom, bus, dev, fn;
	char tail;

	if (!s || sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff || dev > 0x1f ||
	    fn > 7)
		return 0;
	*bdf = ((uint64_t)dom << 32) | ((uint64_t)bus << 8) | ((uint64_t)dev << 3) | fn;
	return 1;
}

static int same_bdf(uint64_t a, uint64_t b)
{
	return (a >> 32) == (b >> 32) && (a & 0xffffu) == (b & 0xffffu);
}

struct telemetry *telemetry_open(const char *pci_bus_id, int index)
{
	struct telemetry *t = xcalloc(1, sizeof(*t));
	rsmi_status_t r;
	uint32_t n = 0;
	uint64_t want = 0;
	int found = 0;

	if (!rsmi_load(t))
		return t;
	LOAD(t, init, "rsmi_init");
	LOAD(t, shutdown, "rsmi_shut_down");
	LOAD(t, errstr, "rsmi_status_string");
	LOAD(t, version, "rsmi_version_get");
	LOAD(t, count, "rsmi_num_monitor_devices");
	LOAD(t, pci, "rsmi_dev_pci_id_get");
	LOAD(t, clock, "rsmi_dev_gpu_clk_freq_get");
	LOAD(t, power, "rsmi_dev_power_ave_get");
	LOAD(t, socket_power, "rsmi_dev_current_socket_power_get");
	LOAD(t, temp, "rsmi_dev_temp_metric_get");
	LOAD(t, busy, "rsmi_dev_busy_percent_get");
	LOAD(t, mem_busy, "rsmi_dev_memory_busy_percent_get");
	LOAD(t, mem_used, "rsmi_dev_memory_usage_get");
	LOAD(t, mem_total, "rsmi_dev_memory_total_get");
	if (!t->init || !t->shutdown || !t->count) {
		snprintf(t->why, sizeof(t->why), "%s lacks rsmi_init/rsmi_shut_down/rsmi_num_monitor_devices",
			 t->lib_name);
		rsmi_unload(t);
		return t;
	}
	r = t->init(0);
	if (r != RSMI_STATUS_SUCCESS) {
		snprintf(t->why, sizeof(t->why), "rsmi_init: %s (no AMD GPU driver?)", rsmi_err(t, r));
		rsmi_unload(t);
		return t;
	}
	rsmi_version_t v = { 0 };
	t->major = t->version && t->version(&v) == RSMI_STATUS_SUCCESS ? (int)v.major : 0;
	r = t->count(&n);
	if (r != RSMI_STATUS_SUCCESS || n == 0) {
		snprintf(t->why, sizeof(t->why), "rsmi_num_monitor_devices: %s",
			 r != RSMI_STATUS_SUCCESS ? rsmi_err(t, r) : "no AMD GPU");
		goto fail;
	}
	if (parse_bdf(pci_bus_id, &want) && t->pci)
		for (uint32_t i = 0; i < n && !found; i++) {
			uint64_t bdf;
			if (t->pci(i, &bdf) == RSMI_STATUS_SUCCESS && same_bdf(bdf, want)) {
				t->dev = i;
				found = 1;
			}
		}
	if (!found) { /* no bus id, or no device with it: ROCm SMI's index */
		uint32_t i = index < 0 ? 0u : (uint32_t)index;
		if (i >= n) {
			snprintf(t->why, sizeof(t->why), "rocm smi device %s: not among its %u devices",
				 pci_bus_id && *pci_bus_id ? pci_bus_id : "by index", n);
			goto fail;
		}
		t->dev = i;
	}
	t->ok = 1;
	return t;
fail:
	if (t->shutdown() != RSMI_STATUS_SUCCESS)
		aorta_warn("rsmi_shut_down failed");
	rsmi_unload(t);
	return t;
}

/* rsmi_frequencies_t as the library fills it: the header's layout up to
 * ROCm 5 (num_supported, current, frequency[32]: 264 bytes); from ROCm 6
 * (library major 6 and up) it starts with `bool has_deep_sleep` and holds
 * 33 frequencies (280 bytes).  The buffer is large enough for both. */
union rsmi_freq_buf {
	rsmi_frequencies_t hdr;
	unsigned char raw[320];
	uint64_t align_;
};

static int clock_mhz(struct telemetry *t, rsmi_clk_type_t type)
{
	union rsmi_freq_buf b;
	uint32_t num, cur, max;
	size_t at;
	uint64_t hz;

	memset(&b, 0, sizeof(b));
	if (!t->clock || t->clock(t->dev, type, &b.hdr) != RSMI_STATUS_SUCCESS)
		return -1;
	if (t->major >= 6) {
		memcpy(&num, b.raw + 4, sizeof(num));
		memcpy(&cur, b.raw + 8, sizeof(cur));
		at = 16;
		max = 33;
	} else {
		num = b.hdr.num_supported;
		cur = b.hdr.current;
		at = offsetof(rsmi_frequencies_t, frequency);
		max = RSMI_MAX_NUM_FREQUENCIES;
	}
	if (num == 0 || num > max || cur >= num)
		return -1;
	memcpy(&hz, b.raw + at + (size_t)cur * sizeof(hz), sizeof(hz));
	return (int)(hz / 1000000u);
}

void telemetry_read(struct telemetry *t, struct gpu_telemetry *o)
{
	uint64_t u64, used;
	int64_t mdeg;
	uint32_t pct;

	memset(o, 0, sizeof(*o));
	o->sm_clock_mhz = o->mem_clock_mhz = o->temp_c = o->gpu_util_pct = o->mem_util_pct = -1;
	o->mem_used_bytes = o->mem_total_bytes = -1;
	o->power_w = NAN;
	if (!t || !t->ok) {
		snprintf(o->why, sizeof(o->why), "%s", t ? t->why : "no telemetry object");
		return;
	}
	o->available = 1;
	/* each query may be NOT_SUPPORTED on a device: the field stays unknown */
	o->sm_clock_mhz = clock_mhz(t, RSMI_CLK_TYPE_SYS);
	o->mem_clock_mhz = clock_mhz(t, RSMI_CLK_TYPE_MEM);
	if (t->power && t->power(t->dev, 0, &u64) == RSMI_STATUS_SUCCESS)
		o->power_w = (double)u64 / 1e6; /* uW */
	else if (t->socket_power && t->socket_power(t->dev, &u64) == RSMI_STATUS_SUCCESS)
		o->power_w = (double)u64 / 1e6;
	/* edge, as rocm-smi --showtemp; parts without an edge sensor (MI300): junction */
	if (t->temp && (t->temp(t->dev, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &mdeg) == RSMI_STATUS_SUCCESS ||
			t->temp(t->dev, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &mdeg) == RSMI_STATUS_SUCCESS))
		o->temp_c = (int)(mdeg / 1000); /* millidegrees */
	if (t->busy && t->busy(t->dev, &pct) == RSMI_STATUS_SUCCESS && pct <= 100)
		o->gpu_util_pct = (int)pct;
	if (t->mem_busy && t->mem_busy(t->dev, &pct) == RSMI_STATUS_SUCCESS && pct <= 100)
		o->mem_util_pct = (int)pct;
	if (t->mem_used && t->mem_total && t->mem_used(t->dev, RSMI_MEM_TYPE_VRAM, &used) == RSMI_STATUS_SUCCESS &&
	    t->mem_total(t->dev, RSMI_MEM_TYPE_VRAM, &u64) == RSMI_STATUS_SUCCESS) {
		o->mem_used_bytes = (long long)used;
		o->mem_total_bytes = (long long)u64;
	}
}

void telemetry_close(struct telemetry *t)
{
	if (!t)
		return;
	if (t->lib) {
		if (t->ok && t->shutdown() != RSMI_STATUS_SUCCESS)
			aorta_warn("rsmi_shut_down failed");
		dlclose(t->lib);
	}
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
