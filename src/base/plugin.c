/*
 * plugin.c - loading libaorta-gpu.so and libaorta-mpi.so (see plugin.h).
 */
#include "base/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct plugin {
	const char *file, *env;
	void *handle;
	char path[PATH_MAX + 32];
};
static struct plugin gpu_plugin = { "libaorta-gpu.so", "AORTA_GPU_LIB", NULL, { 0 } };
static struct plugin mpi_plugin = { "libaorta-mpi.so", "AORTA_MPI_LIB", NULL, { 0 } };

static int plugin_path(const struct plugin *pl, char *path, size_t cap)
{
	const char *env = getenv(pl->env);

	if (env && *env) {
		snprintf(path, cap, "%s", env);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", path, cap > PATH_MAX ? PATH_MAX : cap - 1);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	char *base = slash ? slash + 1 : path;
	snprintf(base, cap - (size_t)(base - path), "%s", pl->file);
	return 0;
}

static void *plugin_sym(struct plugin *pl, const char *sym, char *why, size_t len)
{
	if (!pl->handle) {
		if (plugin_path(pl, pl->path, sizeof(pl->path))) {
			snprintf(why, len, "cannot find the aorta binary's folder");
			return NULL;
		}
		pl->handle = dlopen(pl->path, RTLD_NOW | RTLD_LOCAL);
		if (!pl->handle) {
			snprintf(why, len, "%s", dlerror());
			return NULL;
		}
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
		"or libaorta-gpu.so is not beside the binary (aorta %s needs it)\n",
		why, cmd);
}
