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
 * Not thread safe (call from the command's main thread).
 */
#ifndef AORTA_PLUGIN_H
#define AORTA_PLUGIN_H

#include <stddef.h>

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
