/*
 * plugin.c - loading libaorta-gpu.so (see plugin.h).
 */
#include "base/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *handle;
static char handle_path[PATH_MAX + 32];

static int plugin_path(char *path, size_t cap)
{
	const char *env = getenv("AORTA_GPU_LIB");

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
	snprintf(base, cap - (size_t)(base - path), "libaorta-gpu.so");
	return 0;
}

void *gpu_plugin_sym(const char *sym, char *why, size_t len)
{
	if (!handle) {
		if (plugin_path(handle_path, sizeof(handle_path))) {
			snprintf(why, len, "cannot find the aorta binary's folder");
			return NULL;
		}
		handle = dlopen(handle_path, RTLD_NOW | RTLD_LOCAL);
		if (!handle) {
			snprintf(why, len, "%s", dlerror());
			return NULL;
		}
	}
	void *f = dlsym(handle, sym);
	if (!f)
		snprintf(why, len, "'%.900s' has no %s", handle_path, sym);
	return f;
}

void gpu_plugin_complain(const char *cmd, const char *why)
{
	fprintf(stderr,
		"aorta: error: cannot load the GPU code (%s); this aorta may have been built without nvcc, "
		"or libaorta-gpu.so is not beside the binary (aorta %s needs it)\n",
		why, cmd);
}
