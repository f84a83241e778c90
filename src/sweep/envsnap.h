/*
 * envsnap.h - the environment snapshot (envsnap.c, `aorta env`).
 */
#ifndef AORTA_SWEEP_ENVSNAP_H
#define AORTA_SWEEP_ENVSNAP_H

#include <stddef.h>
#include "base/error.h"

#define ENV_SCHEMA "aorta.env/1"

/* ---- environment snapshot --------------------------------------------------------- */

struct env_field {
	char *key;               /* "nccl.version", "env.NCCL_DEBUG" */
	char *val;               /* NULL: not found / unset */
};
struct env_snapshot {
	struct env_field *f;
	size_t n, cap;
};
void env_snapshot_take(struct env_snapshot *s);
const struct env_field *env_snapshot_find(const struct env_snapshot *s, const char *key);
enum aorta_status env_snapshot_write_json(const struct env_snapshot *s, const char *path,
					  struct aorta_error *e);
void env_snapshot_release(struct env_snapshot *s);

#endif
