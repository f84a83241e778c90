/*
 * scenario.c - a fix as values: the duration, host gap and transfer of
 * every op under a scenario (a set of ranks, an op type, everything, the
 * stage balance), and a lane of a replay set up for it.
 */
#include "overlap/whatif/private.h"
#include "base/stats.h"

#include <stdlib.h>
#include <string.h>

/* The anchors' ideal for scenario sc into each rank's a2 of lane v (fixing
 * never makes a first launch later); returns how many moved. */
static size_t fill_anchors(const struct whatif_ctx *c, struct replay_state *s, size_t v0, const struct scenario *sc)
{
	size_t changed = 0;
	for (size_t i = 0; i < c->n; i++)
		s->k[i].a2[v0] = c->k[i].a0;
	for (size_t a = 0, b; a < c->naord; a = b) {
		b = wi_anchor_group(c, a);
		size_t K = b - a, out = 0;
		int64_t all = c->k[c->aord[a + median_lower_index(K)]].a0, set = all;
		if (sc->type == SC_SET && sc->single < 0) { /* the lower median of the ranks outside the set */
			for (size_t p = a; p < b; p++)
				out += !sc->mask[c->aord[p]];
			for (size_t p = a, m = 0; out && p < b; p++)
				if (!sc->mask[c->aord[p]] && m++ == (out - 1) / 2)
					set = c->k[c->aord[p]].a0;
		}
		for (size_t p = a; p < b; p++) {
			const struct rank_input *k = &c->k[c->aord[p]];
			int64_t v = k->a0;
			if (sc->type == SC_ALL || sc->type == SC_POOL || (sc->type == SC_CAT && sc->cat == WC_HOST))
				v = all;
			else if (sc->type == SC_SET && sc->mask[c->aord[p]] && (sc->part & PART_HOST))
				v = sc->single >= 0 ? k->ma0 : set;
			if (v < k->a0) {
				s->k[c->aord[p]].a2[v0] = v;
				changed++;
			}
		}
	}
	return changed;
}

/* Whether scenario sc changes rank i's ops at all (else they replay as
 * measured). */
static int rank_fixed(const struct whatif_ctx *c, const struct scenario *sc, size_t i)
{
	switch (sc->type) {
	case SC_ALL: case SC_CAT: return 1;
	case SC_POOL: return c->pool != NULL;
	case SC_SET: return sc->mask[i] != 0;
	case SC_BAL: return c->bal != NULL;
	default: return 0;
	}
}

/* Whether fixed rank i has an op whose duration, host gap or (a matched
 * call) transfer the scenario sc changes. */
static int rank_changes(const struct whatif_ctx *c, const struct scenario *sc, size_t i)
{
	const struct rank_input *k = &c->k[i];
	int32_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
	int changed = 0;
	for (size_t j = 0; j < k->n && !changed; j++) {
		size_t q = op_stream(k, j);
		int32_t slot = op_slot(c, k, j, q, pos[q]++);
		int64_t d = meas_e(k, j) - meas_s(k, j);
		if (wi_dur_fixed(c, sc, k, i, j, slot, d) != d)
			changed = 1;
		else if (k->flags[j] & OPF_LAUNCH) {
			int64_t g = op_gap(k, j);
			changed = wi_gap_fixed(c, sc, slot, g) != g;
		}
	}
	free(pos);
	for (size_t x = 0; x < k->ncalls && !changed; x++) {
		size_t m = (size_t)k->calls[x].m;
		int64_t xm = wi_xfer(c, m);
		changed = xfer_of(sc, &c->gm[m], xm, c->xideal[c->gm[m].xcls]) != xm;
	}
	return changed;
}

/* Sets scenario sc in lane v of worker state s (each rank's anchor and
 * whether the scenario fixes it); returns whether any value differs from
 * the measured ones (0: the replay would be the unmodified one). */
int wi_set_scenario(const struct whatif_ctx *c, struct replay_state *s, size_t v, const struct scenario *sc)
{
	s->sc[v] = *sc;
	s->sc[v].nodelay |= c->nodelay_all;
	int changed = fill_anchors(c, s, v, sc) > 0 || (s->sc[v].nodelay && c->unexplained && !c->nodelay_all);
	for (size_t i = 0; i < c->n; i++) {
		unsigned f = (unsigned)rank_fixed(c, sc, i);
		s->k[i].fix = (s->k[i].fix & ~(1u << v)) | f << v;
		if (f && !changed)
			changed = rank_changes(c, sc, i);
	}
	return changed;
}
