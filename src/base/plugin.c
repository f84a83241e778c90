/*
 * plugin.c - loading libaorta-gpu.so and libaorta-mpi.so, and the
 * handshake every plug-in passes before it is used (see plugin.h).
 */
#include "base/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct plugin {
	const char *file, *env, *kind;
	void *handle;
	char path[PATH_MAX + 32];
};
static struct plugin gpu_plugin = { "libaorta-gpu.so", "AORTA_GPU_LIB", "gpu", NULL, { 0 } };
static struct plugin mpi_plugin = { "libaorta-mpi.so", "AORTA_MPI_LIB", "mpi", NULL, { 0 } };

/* The running binary's folder, without the trailing slash; -1 if unknown. */
static int exe_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap > PATH_MAX ? PATH_MAX : cap - 1);
	if (n <= 0)
		return -1;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	return 0;
}

/* The first of dir/a, dir/b, ... that exists (the list ends with NULL);
 * the first candidate when none does, so the error names where it looked
 * first.  0, or -1 when the binary's folder is unknown. */
static int find_beside(const char *const *cands, char *out, size_t cap)
{
	char dir[PATH_MAX + 1];
	if (exe_dir(dir, sizeof(dir)))
		return -1;
	for (int i = 0; cands[i]; i++) {
		snprintf(out, cap, "%s/%s", dir, cands[i]);
		if (access(out, F_OK) == 0)
			return 0;
	}
	snprintf(out, cap, "%s/%s", dir, cands[0]);
	return 0;
}

int aorta_plugin_path(const char *file, char *out, size_t cap)
{
	char a[128], b[128], c[128];
	snprintf(a, sizeof(a), "%s", file);               /* build/aorta, build/libaorta-*.so */
	snprintf(b, sizeof(b), "../lib/aorta/%s", file);  /* PREFIX/bin/aorta, PREFIX/lib/aorta/ */
	snprintf(c, sizeof(c), "../%s", file);            /* test programs in build/tests/ */
	const char *const cands[] = { a, b, c, NULL };
	return find_beside(cands, out, cap);
}

const char *aorta_data_file(const char *rel, char *out, size_t cap)
{
	if (access(rel, F_OK) == 0) {
		snprintf(out, cap, "%s", rel);
		return out;
	}
	char a[PATH_MAX], b[PATH_MAX];
	snprintf(a, sizeof(a), "../%s", rel);             /* build/aorta in the source tree */
	snprintf(b, sizeof(b), "../share/aorta/%s", rel); /* PREFIX/bin/aorta, PREFIX/share/aorta/ */
	const char *const cands[] = { a, b, NULL };
	if (find_beside(cands, out, cap) || access(out, F_OK) != 0)
		snprintf(out, cap, "%s", rel);
	return out;
}

static int plugin_path(const struct plugin *pl, char *path, size_t cap)
{
	const char *env = getenv(pl->env);

	if (env && *env) {
		snprintf(path, cap, "%s", env);
		return 0;
	}
	return aorta_plugin_path(pl->file, path, cap);
}

int aorta_plugin_check(void *h, const char *path, const char *kind, char *why, size_t len)
{
	static const char *const kinds[] = { "gpu", "mpi", "plot" };
	char sym[48];
	snprintf(sym, sizeof(sym), "aorta_plugin_id_%s", kind);
	const struct aorta_plugin_id *id = dlsym(h, sym);
	if (!id) {
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			char other[48];
			snprintf(other, sizeof(other), "aorta_plugin_id_%s", kinds[k]);
			if (strcmp(kinds[k], kind) && dlsym(h, other)) {
				snprintf(why, len, "'%.900s' is aorta's %s plug-in, not its %s plug-in", path, kinds[k], kind);
				return -1;
			}
		}
		snprintf(why, len, "'%.900s' is not an aorta plug-in (it has no %s): a foreign library", path, sym);
		return -1;
	}
	if (strncmp(id->magic, AORTA_PLUGIN_MAGIC, sizeof(id->magic)) || strncmp(id->kind, kind, sizeof(id->kind))) {
		snprintf(why, len, "'%.900s' is not an aorta %s plug-in this aorta knows (its handshake is '%.15s')", path,
			 kind, id->magic);
		return -1;
	}
	if (strncmp(id->build, AORTA_BUILD_ID, sizeof(id->build))) {
		snprintf(why, len, "'%.900s' is a stale %s plug-in: built for aorta %.47s, this aorta is %s; rebuild "
			 "it with the binary (make) or install both again", path, kind, id->build, AORTA_BUILD_ID);
		return -1;
	}
	return 0;
}

static void *plugin_sym(struct plugin *pl, const char *sym, char *why, size_t len)
{
	if (!pl->handle) {
		if (plugin_path(pl, pl->path, sizeof(pl->path))) {
			snprintf(why, len, "cannot find the aorta binary's folder");
			return NULL;
		}
		void *h = dlopen(pl->path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, len, "%s", dlerror());
			return NULL;
		}
		if (aorta_plugin_check(h, pl->path, pl->kind, why, len))
			return NULL; /* left mapped, never called: unloading a library whose own set-up
				      * holds memory (cairo's) would leak it */
		pl->handle = h;
	}
	void *f = dlsym(pl->handle, sym);
	if (!f)
		snprintf(why, len, "'%.900s' has no %s", pl->path, sym);
	return f;
}

void *gpu_plugin_sym(const char *sym, char *why, size_t len)
{
	return plugin_sym(&gpu_plugin, sym, why, len);
}

void *mpi_plugin_sym(const char *sym, char *why, size_t len)
{
	return plugin_sym(&mpi_plugin, sym, why, len);
}

int env_positive_int(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	long x = strtol(v, &end, 10);
	return *end == '\0' && x > 0 && x < 1 << 24 ? (int)x : 0;
}

int mpi_launcher_world_size(void)
{
	int n;
	if ((n = env_positive_int("OMPI_COMM_WORLD_SIZE")) > 0)
		return n;
	if ((n = env_positive_int("PMI_SIZE")) > 0)
		return n;
	/* an sbatch script also has SLURM_NTASKS; only srun sets a step */
	if (getenv("SLURM_STEP_ID") && (n = env_positive_int("SLURM_NTASKS")) > 0)
		return n;
	return 1;
}

void gpu_plugin_complain(const char *cmd, const char *why)
{
	fprintf(stderr,
		"aorta: error: cannot load the GPU code (%s); this aorta may have been built without nvcc, "
		"or libaorta-gpu.so is neither beside the binary nor in ../lib/aorta/ from it (aorta %s needs it; "
		"AORTA_GPU_LIB names another)\n",
		why, cmd);
}
