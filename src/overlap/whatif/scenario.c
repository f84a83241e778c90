/*
 * scenario.c - a fix as values: the duration, host gap and transfer of
 * every op under a scenario (a set of ranks, an op type, everything, the
 * stage balance), and a lane of a replay set up for it.
 */
#include "overlap/whatif/private.h"

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
		int64_t all = c->k[c->aord[a + (K - 1) / 2]].a0, set = all;
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
			if (sc->type == SC_ALL || (sc->type == SC_CAT && sc->cat == WC_HOST))
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
	case SC_SET: return sc->mask[i] != 0;
	case SC_BAL: return c->bal != NULL;
	default: return 0;
	}
}

/* The duration of op j (not a matched call) of fixed rank i under
 * scenario sc (md: the set's medians): the ideal the scenario gives it,
 * at most what it took (but for the stage balance, which moves work). */
int64_t wi_dur_fixed(const struct whatif_ctx *c, const struct scenario *sc, const int64_t *md, const struct rank_input *k,
			 size_t i, size_t j)
{
	int64_t d = k->d[j], d2 = d;
	int32_t q = k->slot[j];
	switch (sc->type) {
	case SC_ALL:
		if (q >= 0)
			d2 = c->med_all_d[q];
		break;
	case SC_CAT: /* an op type's compute or copies (a transfer: op_xfer; host gaps: op_gap) */
		if (sc->cat == k->cat[j] && sc->cat != WC_HOST && sc->cat < WC_COLL && q >= 0)
			d2 = c->med_all_d[q];
		break;
	case SC_BAL:
		return c->bal[i][j];
	case SC_SET:
		if (sc->part & PART_DUR)
			d2 = sc->single >= 0 ? wi_peer_median(c, k, j, 0) : q >= 0 ? md[q] : d;
		break;
	default:
		break;
	}
	return d2 < d ? d2 : d; /* fixing never makes an op slower */
}

/* The host gap before op j (launch known) of fixed rank i under sc. */
int64_t wi_gap_fixed(const struct whatif_ctx *c, const struct scenario *sc, const int64_t *mg, const struct rank_input *k,
			 size_t j)
{
	int64_t g = k->gap[j];
	int32_t q = k->slot[j];
	switch (sc->type) {
	case SC_ALL:
		return q >= 0 ? c->med_all_g[q] : g;
	case SC_CAT:
		return sc->cat == WC_HOST && q >= 0 ? c->med_all_g[q] : g;
	case SC_SET:
		if (sc->part & PART_HOST)
			return sc->single >= 0 ? wi_peer_median(c, k, j, 1) : q >= 0 ? mg[q] : g;
		return g;
	default:
		return g;
	}
}

/* Whether fixed rank i has an op whose duration, host gap or (a matched
 * call) transfer the scenario of lane v changes. */
static int rank_changes(const struct whatif_ctx *c, const struct replay_state *s, size_t v, size_t i)
{
	const struct rank_input *k = &c->k[i];
	const struct scenario *sc = &s->sc[v];
	for (size_t j = 0; j < k->n; j++) {
		if (wi_dur_fixed(c, sc, s->md[v], k, i, j) != k->d[j])
			return 1;
		if (k->o[j].hasl && wi_gap_fixed(c, sc, s->mg[v], k, j) != k->gap[j])
			return 1;
	}
	for (size_t x = 0; x < k->ngops; x++) {
		const struct matched_call *g = &k->gc[x];
		if (c->g[g->grp].n < 2) /* a plain op (build_groups) */
			continue;
		int64_t xm = k->x[g->inst];
		if (xfer_of(sc, k, (size_t)g->j, xm, k->xi[g->inst]) != xm)
			return 1;
	}
	return 0;
}

/* Sets scenario sc in lane v of worker state s (the set's medians, each
 * rank's anchor and whether the scenario fixes it); returns whether any
 * value differs from the measured ones (0: the replay would be the
 * unmodified one). */
int wi_set_scenario(const struct whatif_ctx *c, struct replay_state *s, size_t v, const struct scenario *sc)
{
	s->sc[v] = *sc;
	free(s->md[v]);
	free(s->mg[v]);
	s->md[v] = s->mg[v] = NULL;
	if (sc->type == SC_SET && sc->single < 0) {
		s->md[v] = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
		s->mg[v] = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
		wi_set_medians(c, s->cmask, sc->mask, s->md[v], s->mg[v]);
	}
	int changed = fill_anchors(c, s, v, sc) > 0;
	for (size_t i = 0; i < c->n; i++) {
		unsigned f = (unsigned)rank_fixed(c, sc, i);
		s->k[i].fix = (s->k[i].fix & ~(1u << v)) | f << v;
		if (f && !changed)
			changed = rank_changes(c, s, v, i);
	}
	return changed;
}
