/*
 * match_int.h - what the Flight Recorder matching shares between its two
 * files (match.c: the groups, each member's view of a group and a group's
 * collective divergence; diagnose.c: point to point, the culprits and the
 * verdict): rank sets, views, groups, the job and a divergence at work.
 */
#ifndef AORTA_FLIGHTREC_MATCH_INT_H
#define AORTA_FLIGHTREC_MATCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "flightrec/fr.h"

/* A small set of ranks (sorted where said). */
struct rset {
	int32_t *v;
	size_t n, cap;
};

/* What a pg_status counts; what a view says of a sequence number. */
enum { U_NONE, U_SEQ, U_P2P, U_OP };
enum { S_UNKNOWN, S_NOT, S_ENQ, S_DONE };

/* One member's view of a group (match.c "One rank's view"). */
struct view {
	const struct fr_dump *d;        /* NULL: the member left no dump */
	int32_t rank;
	size_t *ix;                     /* its entries of the group, in buffer order */
	size_t n, cap;
	const struct fr_pgstat *st;     /* its pg_status for the group, or NULL */
	int units;                      /* what st's numbers count */
	int64_t cmin, cmax;             /* collective numbers in the buffer, -1 none */
	int64_t last_done;              /* highest collective number known completed, -1 */
	size_t *cix;                    /* its collective entries sorted by number (stable) */
	size_t nc;
};

/* A group: its id, its members and their views. */
struct grp {
	const char *name, *desc;
	struct rset members;            /* global ranks, sorted */
	int members_known;              /* from a pg_config */
	struct view *v;                 /* one per member (same order) */
	size_t nv, capv;
	uint64_t calls;
	size_t next;                    /* the next group of the same id (split_group), SIZE_MAX */
};

/* The dumps of a job and its groups. */
struct job {
	struct fr_run *run;
	struct grp *g;
	size_t ng, capg;
	size_t *slot;                   /* hash of group ids: first group index + 1, 0 empty */
	size_t nslot;
	int filtered;                   /* some dump holds only active entries */
	struct rset dead;               /* ranks of the job without a dump */
};

/* A group's first divergence while it is looked for. */
struct div_work {
	struct fr_div div;
	struct rset missing, odd, behind;
	int found;
	int cls;                /* 2: missing/op/size/dtype, 1: state */
};

/* match.c */
/* Rank sets: add (once), sort, drop repeats, membership (sorted or
 * not), a copy as a new array, the ranks as words ("ranks 1, 2 and 5"). */
void fm_rs_add(struct rset *s, int32_t r);
void fm_rs_sort(struct rset *s);
void fm_rs_unique(struct rset *s);
int fm_rs_has_sorted(const struct rset *s, int32_t r);
int fm_rs_has(const struct rset *s, int32_t r);
int32_t *fm_rs_copy(const struct rset *s, size_t *n);
void fm_ranks_words(const int32_t *v, size_t n, char *buf, size_t cap);
/* The dump of a global rank (NULL: none); the group slot of an id; a
 * member's view of a group (NULL: not a member). */
const struct fr_dump *fm_dump_of(const struct job *j, int32_t rank);
size_t *fm_slot_of(struct job *j, const char *name);
struct view *fm_view_of(struct grp *g, int32_t rank);
/* What view v says of collective number s (S_*; *en: its entry, if any). */
int fm_coll_state(const struct job *j, const struct view *v, int64_t s, const struct fr_entry **en);
/* The job's groups and every member's view of each. */
void fm_build_groups(struct job *j);
/* A group's first collective divergence into w (w->found). */
void fm_set_name(struct div_work *w, const char *pn);
void fm_coll_divergence(const struct job *j, const struct grp *g, struct div_work *w);

#endif
