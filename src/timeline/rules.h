/*
 * rules.h - kernel-name classification as data.
 *
 * A rule is "KIND REGEX" (POSIX extended regex, searched anywhere in the
 * name unless anchored).  Rules are tried in order and the first match wins;
 * user rules (--rules FILE) are tried before the built-in table, so a user
 * can reclassify any name.  KIND is one of: gemm attention compute comm
 * all_reduce all_gather reduce_scatter broadcast reduce all_to_all send_recv gather
 * scatter comm_other memcpy memcpy_h2d memcpy_d2h memcpy_d2d memcpy_p2p memset sync.
 * "comm" derives the collective type from the name (or from the trace's
 * collective metadata); the others fix it.  Classification runs once per
 * distinct name, so regex cost does not scale with the trace.  Copy
 * records (memcpy) are classified by their direction; user rules are tried
 * on their names first ("Memcpy PtoP (Device -> Device)"), so NCCL's
 * copy-engine collectives can be counted as communication.
 */
#ifndef AORTA_RULES_H
#define AORTA_RULES_H

#include "base/error.h"
#include "timeline/vocab.h"

struct rules;

/* The built-in table (static, never freed). */
const struct rules *rules_builtin(void);
/* Loads FILE as user rules in front of the built-in table.  On error fills e
 * (line number and what was expected) and returns AORTA_EINPUT. */
enum aorta_status rules_load(const char *path, struct rules **out, struct aorta_error *e);
void rules_free(struct rules *r);

/* Classifies one name; *coll receives the collective type for comm kinds
 * (COLL_OTHER when the name does not say). */
enum span_kind rules_classify(const struct rules *r, const char *name,
			      enum record_hint hint, enum coll_type *coll);

#endif
