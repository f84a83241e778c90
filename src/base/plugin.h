/*
 * plugin.h - the GPU plug-in (libaorta-gpu.so) and the MPI plug-in
 * (libaorta-mpi.so) seen from host commands.
 *
 * Commands that need the GPU (train, hwq, sdma, tune-tp) load the plug-in
 * beside the binary or in PREFIX/lib/aorta/ (or $AORTA_GPU_LIB) with dlopen and look up their entry
 * points by name, so build/aorta links no CUDA library and commands that
 * need no GPU never load one.  The handle is opened once and kept for the
 * process (RTLD_LOCAL; the plug-in resolves host functions from the binary,
 * which is linked with -rdynamic).
 *
 * The handshake.  Each plug-in carries struct aorta_plugin_id under a
 * name of its kind (aorta_plugin_id_gpu, _mpi, _plot: AORTA_PLUGIN_ID):
 * the kind, and the build it belongs to (AORTA_BUILD_ID: the version and a
 * hash of every header of src/, which the Makefile computes, so a plug-in
 * built from other sources differs).  Every loader checks it right after
 * dlopen and before any other symbol (aorta_plugin_check): a library that
 * is no aorta plug-in, a plug-in of another kind, or one of another build
 * (stale: the binary was rebuilt, the plug-in not; an older install found
 * first) is refused by name, never called with structures it does not
 * know (a stale MPI plug-in crashed).
 *
 * Not thread safe (call from the command's main thread).
 */
#ifndef AORTA_PLUGIN_H
#define AORTA_PLUGIN_H

#include <stddef.h>

#if __has_include("aorta_abi.h")
#include "aorta_abi.h" /* AORTA_ABI_HASH: the Makefile writes it from the headers of src */
#else
#define AORTA_ABI_HASH "unhashed" /* a build outside the Makefile (no plug-in of its own) */
#endif

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif
#define AORTA_BUILD_ID AORTA_VERSION "+" AORTA_ABI_HASH
#define AORTA_PLUGIN_MAGIC "aorta-plugin/1"

struct aorta_plugin_id {
	char magic[16];   /* AORTA_PLUGIN_MAGIC */
	char kind[8];     /* "gpu", "mpi", "plot" */
	char build[48];   /* AORTA_BUILD_ID of the sources it was built from */
};
/* In one source file of each plug-in: AORTA_PLUGIN_ID(gpu); */
#define AORTA_PLUGIN_ID(k)                                                          \
	extern const struct aorta_plugin_id aorta_plugin_id_##k;                    \
	__attribute__((visibility("default"), used)) const struct aorta_plugin_id  \
		aorta_plugin_id_##k = { AORTA_PLUGIN_MAGIC, #k, AORTA_BUILD_ID }

/* Whether handle h (dlopen'ed from path) is aorta's plug-in of kind
 * ("gpu", "mpi", "plot") from this build: 0, or -1 with why naming path and
 * what it is (a foreign library, another kind, a stale build). */
int aorta_plugin_check(void *h, const char *path, const char *kind, char *why, size_t len);

/* The address of `sym` in the GPU plug-in, or NULL with the reason in why
 * ("cannot load '...': ..." or "'...' has no hwq_run_gpu"). */
void *gpu_plugin_sym(const char *sym, char *why, size_t len);

/* The same for the MPI plug-in (libaorta-mpi.so beside the binary, or
 * $AORTA_MPI_LIB): `aorta analyze` under mpirun / srun. */
void *mpi_plugin_sym(const char *sym, char *why, size_t len);

/* Where plug-in `file` (libaorta-gpu.so, -mpi.so, -plot.so) is, from the
 * running binary's folder: beside it (build/), in ../lib/aorta/ (the
 * installed layout, PREFIX/bin/aorta and PREFIX/lib/aorta/), or one folder up
 * (test programs in build/tests/); the first that exists, else the first
 * candidate.  0, or -1 when the binary's folder is unknown. */
int aorta_plugin_path(const char *file, char *out, size_t cap);

/* A file the program ships (e.g. "config/default.yaml"): `rel` itself when
 * it exists from the current folder, else ../rel from the binary's folder
 * (build/aorta in the source tree), else ../share/aorta/rel (installed:
 * PREFIX/share/aorta/); `rel` when none exists.  Returns out. */
const char *aorta_data_file(const char *rel, char *out, size_t cap);

/* The value of environment variable name when it is a whole number in
 * [1, 2^24), else 0 (unset, empty, or not a number). */
int env_positive_int(const char *name);

/* The number of processes an MPI launcher (mpirun, srun, PMI) announces in
 * the environment, 1 if none. */
int mpi_launcher_world_size(void);

/* The standard message for a command that cannot load it, on stderr. */
void gpu_plugin_complain(const char *cmd, const char *why);

#endif
