/*
 * envsnap.c - the environment snapshot (`aorta env`, and one per
 * environment of a sweep): driver, CUDA runtime, NCCL and cuBLAS versions,
 * GPUs, the host, and the environment variables that change how training
 * communicates.
 *
 * Design.  build/aorta links no CUDA library, so versions are asked at run
 * time: the driver from /proc/driver/nvidia/version (and nvidia-smi when it
 * is on PATH, under a 10 s timeout), GPU names from
 * /proc/driver/nvidia/gpus/<bus>/information; libcudart, libnccl and
 * libcublas are opened with dlopen the way a program started in this
 * environment would find them (LD_LIBRARY_PATH first), their version asked
 * through cudaRuntimeGetVersion, ncclGetVersion and cublasGetProperty
 * (none of which initialises a device) and their path read back with
 * dlinfo.  The libraries stay loaded (they are not made to be unloaded:
 * libstdc++ inside them keeps its allocations, which leak checkers report
 * once the library is gone).  Anything missing is reported as not found (a NULL value), never
 * an error.  ROCm's version comes from /opt/rocm/.info/version when present.
 *
 * The snapshot is a flat list of dotted keys in a fixed order; values are
 * owned by it (env_snapshot_release).
 */
#include "sweep/envsnap.h"

#include <dlfcn.h>
#include <dirent.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/output.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

extern char **environ;

static void add(struct env_snapshot *s, const char *key, const char *val)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].key, key)) {
			free(s->f[i].val);
			s->f[i].val = val ? xstrdup(val) : NULL;
			return;
		}
	GROW(s->f, s->cap, s->n + 1);
	s->f[s->n].key = xstrdup(key);
	s->f[s->n].val = val ? xstrdup(val) : NULL;
	s->n++;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	size_t k = strspn(s, " \t");
	memmove(s, s + k, strlen(s + k) + 1);
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	trim(buf);
	return 0;
}

/* The path a dlopen'ed library was loaded from. */
static void lib_path(void *h, char *buf, size_t len)
{
	struct link_map *lm = NULL;
	buf[0] = '\0';
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
		snprintf(buf, len, "%s", lm->l_name);
}

static void *open_first(const char *const *names, char *path, size_t len)
{
	for (size_t i = 0; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			lib_path(h, path, len);
			return h;
		}
	}
	return NULL;
}

static void probe_driver(struct env_snapshot *s)
{
	char line[512], ver[64] = "";
	if (read_line("/proc/driver/nvidia/version", line, sizeof(line)) == 0) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..." */
		char *p = strstr(line, "Kernel Module");
		if (p) {
			p += strlen("Kernel Module");
			while (*p == ' ')
				p++;
			size_t n = strcspn(p, " ");
			snprintf(ver, sizeof(ver), "%.*s", (int)(n < 60 ? n : 60), p);
		}
	}
	add(s, "driver.version", ver[0] ? ver : NULL);
	/* GPUs from /proc */
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	int ngpu = 0;
	char names[2048] = "";
	size_t o = 0;
	if (d) {
		struct dirent *de;
		char **bus = NULL;
		size_t nb = 0;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			bus = xrealloc(bus, (nb + 1) * sizeof(char *));
			bus[nb++] = xstrdup(de->d_name);
		}
		closedir(d);
		for (size_t i = 1; i < nb; i++) /* sorted by bus id */
			for (size_t j = i; j > 0 && strcmp(bus[j - 1], bus[j]) > 0; j--) {
				char *t = bus[j];
				bus[j] = bus[j - 1];
				bus[j - 1] = t;
			}
		for (size_t i = 0; i < nb; i++) {
			char p[512], l[512];
			snprintf(p, sizeof(p), "/proc/driver/nvidia/gpus/%s/information", bus[i]);
			FILE *f = fopen(p, "r");
			if (f) {
				while (fgets(l, sizeof(l), f))
					if (!strncmp(l, "Model:", 6)) {
						trim(l);
						char *m = l + 6;
						while (*m == ' ' || *m == '\t')
							m++;
						if (o < sizeof(names))
							o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", ngpu ? "; " : "", m);
						ngpu++;
						break;
					}
				fclose(f);
			}
			free(bus[i]);
		}
		free(bus);
	}
	/* nvidia-smi: names, memory and the driver when /proc says nothing */
	{
		FILE *p = popen("command -v nvidia-smi >/dev/null 2>&1 && timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version "
				"--format=csv,noheader 2>/dev/null", "r");
		if (p) {
			char l[512], smi[2048] = "";
			size_t so = 0;
			int n = 0;
			while (fgets(l, sizeof(l), p)) {
				trim(l);
				if (!l[0])
					continue;
				char *c2 = strrchr(l, ',');
				if (c2 && !ver[0]) {
					snprintf(ver, sizeof(ver), "%.60s", c2 + 1);
					trim(ver);
					add(s, "driver.version", ver);
				}
				if (c2)
					*c2 = '\0';
				if (so < sizeof(smi))
					so += (size_t)snprintf(smi + so, sizeof(smi) - so, "%s%s", n ? "; " : "", l);
				n++;
			}
			if (pclose(p) == 0 && n) {
				add(s, "gpu.nvidia_smi", smi);
				if (!ngpu)
					ngpu = n;
			}
		}
	}
	char cnt[32];
	snprintf(cnt, sizeof(cnt), "%d", ngpu);
	add(s, "gpu.count", cnt);
	add(s, "gpu.names", names[0] ? names : NULL);
}

static void version_dotted(int v, int nccl, char *buf, size_t len)
{
	if (nccl) /* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 before */
		snprintf(buf, len, "%d.%d.%d", v >= 20900 ? v / 10000 : v / 1000,
			 v >= 20900 ? (v / 100) % 100 : (v / 100) % 10, v % 100);
	else /* CUDA: major*1000 + minor*10 */
		snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* A library's int version from its sym(int *) (CUDA and NCCL ask so),
 * dotted into buf; NULL when h is NULL, the symbol is missing or the call
 * fails. */
static const char *int_version(void *h, const char *sym, int nccl, char *buf, size_t len)
{
	int (*fn)(int *);
	int x = 0;
	if (!h)
		return NULL;
	*(void **)&fn = dlsym(h, sym);
	if (!fn || fn(&x) != 0 || x <= 0)
		return NULL;
	version_dotted(x, nccl, buf, len);
	return buf;
}


static void probe_libs(struct env_snapshot *s)
{
	char path[4096], ver[64];
	static const char *const cudart[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", NULL };
	static const char *const nccl[] = { "libnccl.so.2", "libnccl.so", NULL };
	static const char *const cublas[] = { "libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", NULL };
	void *h = open_first(cudart, path, sizeof(path));
	add(s, "cuda.runtime_version", int_version(h, "cudaRuntimeGetVersion", 0, ver, sizeof(ver)));
	add(s, "cuda.runtime_path", h && path[0] ? path : NULL);
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	add(s, "cuda.driver_api_version", int_version(h, "cuDriverGetVersion", 0, ver, sizeof(ver)));
	h = open_first(nccl, path, sizeof(path));
	add(s, "nccl.version", int_version(h, "ncclGetVersion", 1, ver, sizeof(ver)));
	add(s, "nccl.path", h && path[0] ? path : NULL);
	const char *v = NULL;
	h = open_first(cublas, path, sizeof(path));
	if (h) {
		int (*fn)(int, int *);
		*(void **)&fn = dlsym(h, "cublasGetProperty");
		int ma = 0, mi = 0, pa = 0;
		if (fn && fn(0, &ma) == 0 && fn(1, &mi) == 0 && fn(2, &pa) == 0) {
			snprintf(ver, sizeof(ver), "%d.%d.%d", ma, mi, pa);
			v = ver;
		}
		add(s, "cublas.version", v);
		add(s, "cublas.path", path[0] ? path : NULL);
	} else {
		add(s, "cublas.version", NULL);
		add(s, "cublas.path", NULL);
	}
	char line[256];
	add(s, "rocm.version", read_line("/opt/rocm/.info/version", line, sizeof(line)) == 0 ? line : NULL);
}

/* The variables that change how training communicates and computes. */
static const char *const VARS[] = {
	"NCCL_DEBUG", "NCCL_NTHREADS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
	"NCCL_MAX_CTAS", "NCCL_CTA_POLICY", "NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE",
	"NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME",
	"NCCL_NET_GDR_LEVEL", "NCCL_CUMEM_ENABLE", "NCCL_LAUNCH_MODE", "NCCL_COLLNET_ENABLE",
	"CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
	"TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_HIGH_PRIORITY", "TORCH_NCCL_AVOID_RECORD_STREAMS",
	"TORCH_SYMM_MEM_DISABLE_MULTICAST", "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS", "LD_LIBRARY_PATH",
	"LD_PRELOAD", "HIP_VISIBLE_DEVICES", "RCCL_MSCCL_ENABLE", "HSA_FORCE_FINE_GRAIN_PCIE", NULL,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void probe_vars(struct env_snapshot *s)
{
	char key[300];
	for (size_t i = 0; VARS[i]; i++) {
		snprintf(key, sizeof(key), "env.%s", VARS[i]);
		add(s, key, getenv(VARS[i]));
	}
	/* any other NCCL_, CUDA_, TORCH_, RCCL_ or AORTA_ variable that is set, sorted */
	char **more = NULL;
	size_t n = 0;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "NCCL_", 5) && strncmp(*e, "CUDA_", 5) && strncmp(*e, "TORCH_", 6) &&
		    strncmp(*e, "RCCL_", 5) && strncmp(*e, "AORTA_", 6))
			continue;
		more = xrealloc(more, (n + 1) * sizeof(char *));
		more[n++] = xstrdup(*e);
	}
	qsort(more, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(more[i], '=');
		if (eq) {
			*eq = '\0';
			snprintf(key, sizeof(key), "env.%s", more[i]);
			add(s, key, eq + 1);
		}
		free(more[i]);
	}
	free(more);
}

void env_snapshot_take(struct env_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	char buf[512];
	add(s, "aorta.version", AORTA_VERSION);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	add(s, "time_utc", buf);
	add(s, "host.name", gethostname(buf, sizeof(buf)) == 0 ? buf : NULL);
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		add(s, "host.kernel", buf);
	} else {
		add(s, "host.kernel", NULL);
	}
	const char *cpu = NULL;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
				cpu = strchr(line, ':') + 1;
				trim((char *)cpu);
				break;
			}
		fclose(f);
	}
	add(s, "host.cpu", cpu);
	snprintf(buf, sizeof(buf), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	add(s, "host.cpus", buf);
	probe_driver(s);
	probe_libs(s);
	probe_vars(s);
}

const struct env_field *env_snapshot_find(const struct env_snapshot *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].key, key))
			return &s->f[i];
	return NULL;
}

enum aorta_status env_snapshot_write_json(const struct env_snapshot *s, const char *path, struct aorta_error *e)
{
	struct outfile o;
	if (out_open(&o, path, e))
		return e->code;
	struct jw w;
	jw_init(&w, o.f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", ENV_SCHEMA);
	for (size_t i = 0; i < s->n; i++) {
		if (s->f[i].val)
			jw_str(&w, s->f[i].key, s->f[i].val);
		else
			jw_null(&w, s->f[i].key);
	}
	jw_obj_end(&w);
	fputc('\n', o.f);
	return out_commit(&o, e);
}

void env_snapshot_release(struct env_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->f[i].key);
		free(s->f[i].val);
	}
	free(s->f);
	memset(s, 0, sizeof(*s));
}
