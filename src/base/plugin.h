/*
 * plugin.h - the GPU plug-in (libaorta-gpu.so) and the MPI plug-in
 * (libaorta-mpi.so) seen from host commands.
 *
 * Commands that need the GPU (train, hwq, sdma, tune-tp) load the plug-in
 * beside the binary (or $AORTA_GPU_LIB) with dlopen and look up their entry
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

/* The value of environment variable name when it is a whole number in
 * [1, 2^24), else 0 (unset, empty, or not a number). */
int env_positive_int(const char *name);

/* The number of processes an MPI launcher (mpirun, srun, PMI) announces in
 * the environment, 1 if none. */
int mpi_launcher_world_size(void);

/* The standard message for a command that cannot load it, on stderr. */
void gpu_plugin_complain(const char *cmd, const char *why);

#endif
