/*
 * cupti.c - CUPTI activity capture (design and schedule in cupti.h).
 *
 * Design.  The CUPTI header gives the record layouts (CUpti_ActivityKernel10,
 * Memcpy6, MemcpyPtoP4 (kind MEMCPY2: every copy between two devices, which
 * CUPTI never reports as MEMCPY), Memset4, API for CUDA 13); the functions come from dlsym, typed
 * with __typeof__ of the header's own declarations so a signature can
 * never drift.  CUPTI hands filled buffers to bufferCompleted on its worker
 * thread (or on ours during a flush); each record is converted at once into
 * a struct kw_event (names interned in a strtab, whose strings never move)
 * under a mutex, and the buffer is freed.  Records outside a recording
 * window (warm-up) are dropped there.  At the end of a window the device is
 * synchronised, CUPTI is flushed (forced), the host ProfilerStep#N ranges
 * and their GPU-side annotations are added, events are sorted by start and
 * handed to kineto_write (src/timeline/kineto_write.c).
 *
 * Kernel names are demangled with the C++ runtime's __cxa_demangle (found
 * with dlsym, so the file stays C), as Kineto writes them.
 *
 * Clock: everything is CUPTI's timestamp (ns, cuptiGetTimestamp), host
 * step boundaries included, so host and device rows line up; the file's
 * baseTimeNanoseconds is the window's first step start.
 */
#include "gpu/cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "base/strtab.h"
#include "gpu/gpu.h"
#include "timeline/kineto_write.h"

#define BUF_BYTES (8u << 20)

/* ------------------------------------------------------------------ */
/* the library                                                         */
/* ------------------------------------------------------------------ */

struct cupti_fns {
	void *lib;
	__typeof__(&cuptiActivityEnable) enable;
	__typeof__(&cuptiActivityDisable) disable;
	__typeof__(&cuptiActivityRegisterCallbacks) register_cb;
	__typeof__(&cuptiActivityFlushAll) flush_all;
	__typeof__(&cuptiActivityGetNextRecord) next_record;
	__typeof__(&cuptiActivityGetNumDroppedRecords) dropped;
	__typeof__(&cuptiGetResultString) result_string;
	__typeof__(&cuptiGetTimestamp) timestamp;
	__typeof__(&cuptiGetVersion) version;
	__typeof__(&cuptiGetCallbackName) callback_name;
	/* the C++ ABI demangler, from libstdc++ that libcupti loads; NULL if absent */
	char *(*demangle)(const char *, char *, size_t *, int *);
};

static struct cupti_fns F;
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

#define LOAD(field, sym) do { void *p_ = dlsym(F.lib, sym); \
	memcpy(&F.field, &p_, sizeof(p_)); if (!p_) missing = sym; } while (0)

/* Loads libcupti once per process; 0 on success, else -1 with why. */
static int load_cupti(char *why, size_t cap)
{
	static const char *const names[] = {
		"libcupti.so.13", "libcupti.so",
		"/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	};
	const char *missing = NULL, *env = getenv("AORTA_CUPTI_LIB");
	char first_err[256] = "";
	int rc = 0;

	pthread_mutex_lock(&lib_lock);
	if (F.lib)
		goto out;
	if (env && *env)
		F.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; !F.lib && i < sizeof(names) / sizeof(names[0]); i++) {
		F.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!F.lib && !first_err[0]) {
			const char *d = dlerror();
			snprintf(first_err, sizeof(first_err), "%s", d ? d : names[i]);
		}
	}
	if (!F.lib) {
		snprintf(why, cap, "libcupti not loadable (%s)", first_err);
		rc = -1;
		goto out;
	}
	LOAD(enable, "cuptiActivityEnable");
	LOAD(disable, "cuptiActivityDisable");
	LOAD(register_cb, "cuptiActivityRegisterCallbacks");
	LOAD(flush_all, "cuptiActivityFlushAll");
	LOAD(next_record, "cuptiActivityGetNextRecord");
	LOAD(dropped, "cuptiActivityGetNumDroppedRecords");
	LOAD(result_string, "cuptiGetResultString");
	LOAD(timestamp, "cuptiGetTimestamp");
	LOAD(version, "cuptiGetVersion");
	LOAD(callback_name, "cuptiGetCallbackName");
	{
		void *p = dlsym(F.lib, "__cxa_demangle");
		if (!p)
			p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!p) { /* a C-only binary: load the C++ runtime for its demangler (kept loaded) */
			void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
			p = cxx ? dlsym(cxx, "__cxa_demangle") : NULL;
		}
		memcpy(&F.demangle, &p, sizeof(p));
	}
	if (missing) {
		snprintf(why, cap, "libcupti lacks %s", missing);
		dlclose(F.lib);
		memset(&F, 0, sizeof(F));
		rc = -1;
	}
out:
	pthread_mutex_unlock(&lib_lock);
	return rc;
}

int cupti_available(char *why, size_t cap)
{
	char w[300];

	if (load_cupti(w, sizeof(w)) != 0) {
		if (why && cap)
			snprintf(why, cap, "%s", w);
		return 0;
	}
	if (why && cap)
		why[0] = '\0';
	return 1;
}

static enum aorta_status cupti_status(CUptiResult r, struct aorta_error *e, const char *what,
				      const char *file, int line)
{
	const char *s = NULL;

	if (r == CUPTI_SUCCESS)
		return AORTA_OK;
	if (F.result_string && F.result_string(r, &s) != CUPTI_SUCCESS)
		s = NULL;
	return aorta_fail(e, AORTA_EGPU, "", 0, -1, "%s:%d: %s: %s (%d)", file, line, what,
			  s ? s : "CUPTI error", (int)r);
}

#define CUPTI_CHECK(e, call) do { \
	if (cupti_status((call), (e), #call, __FILE__, __LINE__) != AORTA_OK) \
		return AORTA_EGPU; } while (0)

/* ------------------------------------------------------------------ */
/* capture state                                                       */
/* ------------------------------------------------------------------ */

enum action { A_NONE = 0, A_WARMUP, A_RECORD, A_RECORD_AND_SAVE };

struct hstep { int64_t number, start_ns, end_ns; };

struct cupti_capture {
	struct cupti_opts o;
	char *output_dir, *backend;
	int device;
	int64_t step;            /* current step number (cupti_step calls so far) */
	enum action act;
	int enabled;             /* activity kinds enabled */
	int64_t step_start_ns;   /* CUPTI time the current step began */
	int64_t host_pid, host_tid;
	uint32_t host_cupti_tid;  /* CUPTI's id for this thread (pthread_self, 32 bits) */

	pthread_mutex_t lock;    /* guards everything below (CUPTI's thread writes) */
	int keep;                /* convert records (recording) or drop them (warm-up) */
	struct strtab names;
	struct kw_event *ev;
	size_t nev, evcap;
	struct hstep *steps;     /* recorded steps of the window */
	size_t nsteps, stepcap;
	struct cupti_stats stats;
	struct aorta_error cb_err; /* first error seen in a callback */
	int cb_failed;
};

static struct cupti_capture *active; /* CUPTI callbacks are process-wide */
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;

static enum action schedule(const struct cupti_schedule *s, int64_t step)
{
	int64_t cycle = (int64_t)s->wait + s->warmup + s->active, k;

	if (step < s->skip_first)
		return A_NONE;
	step -= s->skip_first;
	if (s->repeat > 0 && step / cycle >= s->repeat)
		return A_NONE;
	k = step % cycle;
	if (k < s->wait)
		return A_NONE;
	if (k < (int64_t)s->wait + s->warmup)
		return A_WARMUP;
	return k < cycle - 1 ? A_RECORD : A_RECORD_AND_SAVE;
}

/* ------------------------------------------------------------------ */
/* buffers                                                             */
/* ------------------------------------------------------------------ */

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max_records = 0;
}

static const char *mem_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
	default: return "Unknown";
	}
}

static const char *copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "Unknown";
	}
}

static const char *intern(struct cupti_capture *c, const char *s, size_t n)
{
	return strtab_get(&c->names, strtab_intern(&c->names, s, n));
}

static struct kw_event *new_event(struct cupti_capture *c, enum kw_cat cat, uint64_t start,
				  uint64_t end, int64_t pid, int64_t tid, int64_t corr)
{
	struct kw_event *v;

	GROW(c->ev, c->evcap, c->nev + 1);
	v = &c->ev[c->nev++];
	memset(v, 0, sizeof(*v));
	v->cat = cat;
	v->start_ns = (int64_t)start;
	v->end_ns = (int64_t)end;
	v->pid = pid;
	v->tid = tid;
	v->correlation = corr;
	v->regs_per_thread = v->shared_mem_bytes = v->cbid = -1;
	return v;
}

/* One record -> one kw_event (c->lock held). */
static void convert(struct cupti_capture *c, const CUpti_Activity *rec)
{
	char name[256];
	int n;

	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		struct kw_event *v = new_event(c, KW_KERNEL, k->start, k->end, k->deviceId,
					       k->streamId, k->correlationId);
		const char *nm = k->name ? k->name : "";
		char *dm = NULL;
		int dst = -1;
		/* Kineto writes demangled names ("void foo<float>(float*, int)") */
		if (F.demangle && nm[0] == '_' && nm[1] == 'Z')
			dm = F.demangle(nm, NULL, NULL, &dst);
		if (dm && dst == 0)
			nm = dm;
		v->name = intern(c, nm, strlen(nm));
		free(dm);
		v->grid[0] = k->gridX; v->grid[1] = k->gridY; v->grid[2] = k->gridZ;
		v->block[0] = k->blockX; v->block[1] = k->blockY; v->block[2] = k->blockZ;
		v->regs_per_thread = k->registersPerThread;
		v->shared_mem_bytes = k->staticSharedMemory + k->dynamicSharedMemory;
		c->stats.kernels++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
		struct kw_event *v = new_event(c, KW_MEMCPY, m->start, m->end, m->deviceId,
					       m->streamId, m->correlationId);
		n = snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(m->copyKind),
			     mem_kind(m->srcKind), mem_kind(m->dstKind));
		v->name = intern(c, name, n > 0 ? (size_t)n : 0);
		v->bytes = m->bytes;
		c->stats.memcpys++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		/* peer-to-peer copies (cudaMemcpyPeerAsync, or any copy between
		 * two devices) come as MEMCPY2, never as MEMCPY: written as
		 * Kineto gpu_memcpy on the device and stream that issued it,
		 * "Memcpy PtoP (Device -> Device)" as PyTorch's profiler names it */
		const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
		struct kw_event *v = new_event(c, KW_MEMCPY, m->start, m->end, m->deviceId,
					       m->streamId, m->correlationId);
		uint8_t ck = m->copyKind;
		if (ck != CUPTI_ACTIVITY_MEMCPY_KIND_PTOP && ck != CUPTI_ACTIVITY_MEMCPY_KIND_DTOD)
			ck = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
		if (m->srcDeviceId != m->dstDeviceId)
			ck = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
		n = snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(ck),
			     mem_kind(m->srcKind), mem_kind(m->dstKind));
		v->name = intern(c, name, n > 0 ? (size_t)n : 0);
		v->bytes = m->bytes;
		c->stats.memcpys++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		struct kw_event *v = new_event(c, KW_MEMSET, m->start, m->end, m->deviceId,
					       m->streamId, m->correlationId);
		n = snprintf(name, sizeof(name), "Memset (%s)", mem_kind((uint8_t)m->memoryKind));
		v->name = intern(c, name, n > 0 ? (size_t)n : 0);
		v->bytes = m->bytes;
		c->stats.memsets++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		/* CUPTI names threads by pthread_self; the opening thread gets its
		 * system thread id so its calls share a row with ProfilerStep#N */
		int64_t tid = a->threadId == c->host_cupti_tid ? c->host_tid : (int64_t)a->threadId;
		struct kw_event *v = new_event(c, KW_RUNTIME, a->start, a->end, a->processId,
					       tid, a->correlationId);
		const char *cb = NULL;
		if (F.callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &cb) != CUPTI_SUCCESS || !cb)
			cb = "cudaRuntimeCall";
		/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", as Kineto names it */
		const char *us = strstr(cb, "_v");
		size_t len = us && us[2] >= '0' && us[2] <= '9' ? (size_t)(us - cb) : strlen(cb);
		v->name = intern(c, cb, len);
		v->cbid = (int32_t)a->cbid;
		c->stats.runtime++;
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid)
{
	struct cupti_capture *c;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&active_lock);
	c = active;
	if (c) {
		pthread_mutex_lock(&c->lock);
		for (;;) {
			CUptiResult r = F.next_record(buf, valid, &rec);
			if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
				break;
			if (r != CUPTI_SUCCESS) {
				if (!c->cb_failed)
					cupti_status(r, &c->cb_err, "cuptiActivityGetNextRecord",
						     __FILE__, __LINE__);
				c->cb_failed = 1;
				break;
			}
			if (c->keep)
				convert(c, rec);
		}
		if (F.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
			c->stats.dropped += dropped;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&active_lock);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* enabling and writing                                                */
/* ------------------------------------------------------------------ */

/* MEMCPY2: peer-to-peer copies (CUPTI reports them only under this kind) */
static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
};

static enum aorta_status enable(struct cupti_capture *c, struct aorta_error *e)
{
	if (c->enabled)
		return AORTA_OK;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		/* a CUPTI without peer-copy records still traces the rest */
		if (kinds[i] == CUPTI_ACTIVITY_KIND_MEMCPY2) {
			if (F.enable(kinds[i]) != CUPTI_SUCCESS)
				aorta_warn("cupti: peer-to-peer copies (MEMCPY2) cannot be traced");
			continue;
		}
		CUPTI_CHECK(e, F.enable(kinds[i]));
	}
	c->enabled = 1;
	return AORTA_OK;
}

/* Waits for the device, disables (if asked, and not always_on), forces
 * every buffer out. */
static enum aorta_status drain(struct cupti_capture *c, int disable_too, struct aorta_error *e)
{
	GPU_CHECK(e, gpuDeviceSynchronize());
	if (disable_too && c->enabled && !c->o.always_on) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			if (kinds[i] == CUPTI_ACTIVITY_KIND_MEMCPY2) { /* may never have been on */
				F.disable(kinds[i]);
				continue;
			}
			CUPTI_CHECK(e, F.disable(kinds[i]));
		}
		c->enabled = 0;
	}
	CUPTI_CHECK(e, F.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	return AORTA_OK;
}

static int64_t now_ns(void)
{
	uint64_t t = 0;

	if (F.timestamp(&t) != CUPTI_SUCCESS)
		return 0;
	return (int64_t)t;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct kw_event *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (int)x->cat - (int)y->cat;
}

struct corr_start { int64_t corr, start; };

static int cs_cmp(const void *a, const void *b)
{
	const struct corr_start *x = a, *y = b;

	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Adds host ProfilerStep#N ranges and, per (device, stream), the GPU span
 * of the work each step launched (c->lock held). */
static void add_step_annotations(struct cupti_capture *c)
{
	struct corr_start *cs = xmalloc((c->nev + 1) * sizeof(*cs));
	size_t ncs = 0, nbase = c->nev;
	char name[48];

	for (size_t i = 0; i < nbase; i++)
		if (c->ev[i].cat == KW_RUNTIME)
			cs[ncs++] = (struct corr_start){ c->ev[i].correlation, c->ev[i].start_ns };
	qsort(cs, ncs, sizeof(*cs), cs_cmp);
	for (size_t k = 0; k < c->nsteps; k++) {
		const struct hstep *h = &c->steps[k];
		int n = snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)h->number);
		const char *nm = intern(c, name, n > 0 ? (size_t)n : 0);
		struct kw_event *v = new_event(c, KW_USER_ANNOTATION, (uint64_t)h->start_ns,
					       (uint64_t)h->end_ns, c->host_pid, c->host_tid, -1);
		v->name = nm;
		/* GPU side: min start / max end per (device, stream) of work launched in the step */
		struct gs { int64_t dev, stream, lo, hi; } *g = NULL;
		size_t ng = 0, gcap = 0;
		for (size_t i = 0; i < nbase; i++) {
			const struct kw_event *x = &c->ev[i];
			if (x->cat != KW_KERNEL && x->cat != KW_MEMCPY && x->cat != KW_MEMSET)
				continue;
			struct corr_start key = { x->correlation, 0 };
			const struct corr_start *hit = bsearch(&key, cs, ncs, sizeof(*cs), cs_cmp);
			if (!hit || hit->start < h->start_ns || hit->start >= h->end_ns)
				continue;
			size_t j;
			for (j = 0; j < ng; j++)
				if (g[j].dev == x->pid && g[j].stream == x->tid)
					break;
			if (j == ng) {
				GROW(g, gcap, ng + 1);
				g[ng++] = (struct gs){ x->pid, x->tid, x->start_ns, x->end_ns };
			} else {
				if (x->start_ns < g[j].lo)
					g[j].lo = x->start_ns;
				if (x->end_ns > g[j].hi)
					g[j].hi = x->end_ns;
			}
		}
		for (size_t j = 0; j < ng; j++) {
			struct kw_event *a = new_event(c, KW_GPU_USER_ANNOTATION, (uint64_t)g[j].lo,
						       (uint64_t)g[j].hi, g[j].dev, g[j].stream, -1);
			a->name = nm;
		}
		free(g);
	}
	free(cs);
}

static enum aorta_status write_window(struct cupti_capture *c, struct aorta_error *e)
{
	struct gpu_device_info di;
	struct kw_device d;
	struct kw_trace t;
	char path[1024];
	uint32_t cupti_ver = 0;
	enum aorta_status st;
	int dev = c->device;

	if (dev < 0)
		GPU_CHECK(e, gpuGetDevice(&dev));
	st = gpu_device_query(dev, &di, e);
	if (st != AORTA_OK)
		return st;
	CUPTI_CHECK(e, F.version(&cupti_ver));
	if (kineto_trace_path(path, sizeof(path), c->output_dir, c->o.rank, c->host_pid,
			      c->step - 1, c->o.gzip) < 0) /* the last step of the window */
		return aorta_fail(e, AORTA_EUSAGE, c->output_dir, 0, -1, "output path too long");

	pthread_mutex_lock(&c->lock);
	add_step_annotations(c);
	qsort(c->ev, c->nev, sizeof(*c->ev), ev_cmp);

	memset(&d, 0, sizeof(d));
	d.id = dev;
	d.name = di.name;
	d.total_global_mem = di.total_mem_bytes;
	d.compute_major = di.cc_major;
	d.compute_minor = di.cc_minor;
	d.num_sms = di.sm_count;
	d.max_threads_per_block = di.max_threads_per_block;
	d.max_threads_per_sm = di.max_threads_per_sm;
	d.regs_per_block = di.regs_per_block;
	d.warp_size = di.warp_size;
	d.shared_mem_per_block = di.shared_mem_per_block;
	d.shared_mem_per_block_optin = di.shared_mem_per_block_optin;
	d.shared_mem_per_sm = di.shared_mem_per_sm;

	memset(&t, 0, sizeof(t));
	t.backend = c->backend;
	t.rank = c->o.rank;
	t.world_size = c->o.world_size;
	t.devices = &d;
	t.ndevices = 1;
	t.ev = c->ev;
	t.nev = c->nev;
	t.base_ns = c->nsteps ? c->steps[0].start_ns : c->nev ? c->ev[0].start_ns : 0;
	t.cupti_version = (int)cupti_ver;
	t.cuda_runtime_version = di.runtime_version;
	t.cuda_driver_version = di.driver_version;
	t.host_pid = c->host_pid;
	t.host_name = "aorta";
	st = kineto_write(path, &t, c->o.gzip, e);
	if (st == AORTA_OK) {
		c->stats.traces_written++;
		snprintf(c->stats.last_path, sizeof(c->stats.last_path), "%s", path);
	}
	c->nev = 0;
	c->nsteps = 0;
	pthread_mutex_unlock(&c->lock);
	return st;
}

/* Moves from c->act to next at a step boundary (the step that just ended
 * had action c->act). */
static enum aorta_status transition(struct cupti_capture *c, enum action next, struct aorta_error *e)
{
	enum aorta_status st;
	enum action prev = c->act;
	int64_t t = now_ns();

	if (prev == A_RECORD || prev == A_RECORD_AND_SAVE) {
		pthread_mutex_lock(&c->lock);
		GROW(c->steps, c->stepcap, c->nsteps + 1);
		c->steps[c->nsteps++] = (struct hstep){ c->step - 1, c->step_start_ns, t };
		pthread_mutex_unlock(&c->lock);
	}
	if (prev == A_RECORD_AND_SAVE) {
		st = drain(c, 1, e);
		if (st == AORTA_OK)
			st = write_window(c, e);
		pthread_mutex_lock(&c->lock);
		c->keep = 0;
		c->nev = c->nsteps = 0;
		pthread_mutex_unlock(&c->lock);
		if (st != AORTA_OK)
			return st;
		prev = A_NONE;
	}
	if (next == A_NONE && prev != A_NONE) {
		/* left a window without saving (schedule cannot do it; close can): drop */
		st = drain(c, 1, e);
		pthread_mutex_lock(&c->lock);
		c->keep = 0;
		c->nev = c->nsteps = 0;
		pthread_mutex_unlock(&c->lock);
		if (st != AORTA_OK)
			return st;
	}
	if (next == A_WARMUP || next == A_RECORD || next == A_RECORD_AND_SAVE) {
		st = enable(c, e);
		if (st != AORTA_OK)
			return st;
	}
	if ((next == A_RECORD || next == A_RECORD_AND_SAVE) && prev != A_RECORD) {
		/* window starts: drop what warm-up collected, keep from here on */
		st = drain(c, 0, e);
		if (st != AORTA_OK)
			return st;
		pthread_mutex_lock(&c->lock);
		c->nev = c->nsteps = 0;
		c->keep = 1;
		pthread_mutex_unlock(&c->lock);
	}
	c->act = next;
	c->step_start_ns = now_ns();
	return AORTA_OK;
}

/* ------------------------------------------------------------------ */
/* public                                                              */
/* ------------------------------------------------------------------ */

enum aorta_status cupti_open(struct cupti_capture **out, const struct cupti_opts *o,
			     struct aorta_error *e)
{
	struct cupti_capture *c;
	char why[300];
	enum aorta_status st;

	*out = NULL;
	if (o->sched.active < 1 || o->sched.wait < 0 || o->sched.warmup < 0 ||
	    o->sched.skip_first < 0 || o->sched.repeat < 0)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "profiler schedule needs active >= 1 and no negative counts");
	if (load_cupti(why, sizeof(why)) != 0)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "cupti unavailable: %s", why);
	pthread_mutex_lock(&active_lock);
	if (active) {
		pthread_mutex_unlock(&active_lock);
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "a CUPTI capture is already open");
	}
	c = xcalloc(1, sizeof(*c));
	c->o = *o;
	c->output_dir = xstrdup(o->output_dir && *o->output_dir ? o->output_dir : ".");
	c->backend = xstrdup(o->backend ? o->backend : "nccl");
	c->device = o->device;
	c->host_pid = (int64_t)getpid();
	c->host_tid = (int64_t)syscall(SYS_gettid);
	c->host_cupti_tid = (uint32_t)(uintptr_t)pthread_self();
	pthread_mutex_init(&c->lock, NULL);
	strtab_init(&c->names);
	active = c;
	pthread_mutex_unlock(&active_lock);

	st = cupti_status(F.register_cb(buf_requested, buf_completed), e,
			  "cuptiActivityRegisterCallbacks", __FILE__, __LINE__);
	if (st == AORTA_OK && o->always_on)
		st = enable(c, e);
	if (st == AORTA_OK)
		st = transition(c, schedule(&c->o.sched, 0), e);
	if (st != AORTA_OK) {
		cupti_close(c, NULL);
		return st;
	}
	*out = c;
	return AORTA_OK;
}

enum aorta_status cupti_step(struct cupti_capture *c, struct aorta_error *e)
{
	enum aorta_status st;

	c->step++;
	st = transition(c, schedule(&c->o.sched, c->step), e);
	if (st == AORTA_OK && c->cb_failed) {
		if (e)
			*e = c->cb_err;
		c->cb_failed = 0;
		st = AORTA_EGPU;
	}
	return st;
}

enum aorta_status cupti_close(struct cupti_capture *c, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;

	if (!c)
		return AORTA_OK;
	if (c->act == A_RECORD || c->act == A_RECORD_AND_SAVE) {
		/* the profiler's stop(): the open window is saved */
		c->step++;
		c->act = A_RECORD_AND_SAVE;
		st = transition(c, A_NONE, e);
	}
	c->o.always_on = 0; /* closing: really disable */
	if (c->enabled) {
		enum aorta_status s2 = drain(c, 1, e);
		if (st == AORTA_OK)
			st = s2;
	}
	pthread_mutex_lock(&active_lock);
	active = NULL;
	pthread_mutex_unlock(&active_lock);
	pthread_mutex_destroy(&c->lock);
	strtab_release(&c->names);
	free(c->ev);
	free(c->steps);
	free(c->output_dir);
	free(c->backend);
	free(c);
	return st;
}

void cupti_get_stats(const struct cupti_capture *c, struct cupti_stats *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&c->lock);
	*s = c->stats;
	pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
}
