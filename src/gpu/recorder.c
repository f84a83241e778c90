/*
 * recorder.c - event-based span recorder (design in recorder.h).
 *
 * Memory: per recorder, the event pool (2 events per range, 1 per marker,
 * plus start, end and one tail per stream used), a slot table, a tag
 * buffer and the output arrays; all kept across steps.  Per step: no
 * allocation once the high-water mark is reached.  Per range on the hot
 * path: two cudaEventRecord calls and a copy of the tag.
 *
 * Graph mode (rec_capture_begin, design in recorder.h): while capturing,
 * record() makes external event-record nodes and notes each pool event's
 * stream; in replay it records nothing and only checks that the k-th event
 * taken is on the stream the k-th captured one was, so the same pool
 * indices (hence the same slots) come back every step.
 */
#include "gpu/recorder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define NO_STR UINT32_MAX

struct slot {
	gpuStream_t s;
	int label;
	enum rec_kind kind;
	uint32_t tag, fn;        /* offsets into tags, NO_STR if none */
	int evb, eve;            /* pool indices; eve -1 until rec_end */
};

struct mslot {
	int label;
	uint32_t tag;
	int ev;
};

enum rec_mode { RM_EAGER, RM_CAPTURE, RM_REPLAY };

struct recorder {
	const struct gpu_streams *g;
	enum rec_mode mode;
	gpuStream_t *ev_stream;  /* graph mode: stream of each pool event at capture */
	size_t ev_stream_cap;
	size_t cap_used;         /* events one captured step takes (0: capture not ended) */
	gpuEvent_t *pool;
	size_t npool, used;
	unsigned grown;
	int ev_start;            /* pool index of the step start, -1 if none */
	int64_t step;

	struct slot *slot;
	size_t nslot, slot_cap;
	struct mslot *mark;
	size_t nmark, mark_cap;
	char *tags;
	size_t ntags, tags_cap;
	gpuStream_t *streams;    /* distinct streams used this step */
	size_t nstreams, streams_cap;

	struct rec_range *out;
	size_t out_cap;
	struct rec_mark *mout;
	size_t mout_cap;

	enum aorta_status st;    /* sticky: first error of the step */
	struct aorta_error err;
};

static const char *const kind_names[REC__COUNT] = {
	"compute", "all_reduce", "reduce_scatter", "all_gather", "comm",
	"memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memset",
};

const char *rec_kind_name(enum rec_kind k)
{
	return (unsigned)k < REC__COUNT ? kind_names[k] : "unknown";
}

/* ------------------------------------------------------------------ */
/* pool, tags, errors                                                  */
/* ------------------------------------------------------------------ */

static enum aorta_status pool_grow(struct recorder *r, size_t need, struct aorta_error *e)
{
	size_t n = r->npool ? r->npool : 16;

	while (n < need)
		n *= 2;
	r->pool = xrealloc(r->pool, n * sizeof(*r->pool));
	for (size_t i = r->npool; i < n; i++) {
		if (GPU_CALL(e, gpuEventCreateWithFlags(&r->pool[i], gpuEventDefault)) != AORTA_OK) {
			r->npool = i;
			return AORTA_EGPU;
		}
	}
	r->npool = n;
	return AORTA_OK;
}

/* Next pool event, or -1 after an error (kept in r). */
static int take_event(struct recorder *r)
{
	if (r->st != AORTA_OK)
		return -1;
	if (r->used == r->npool) {
		r->grown++;
		r->st = pool_grow(r, r->used + 1, &r->err);
		if (r->st != AORTA_OK)
			return -1;
	}
	return (int)r->used++;
}

static uint32_t keep_str(struct recorder *r, const char *s)
{
	size_t n;

	if (!s)
		return NO_STR;
	n = strlen(s) + 1;
	if (r->ntags + n > UINT32_MAX - 1)
		n = 1, s = "";
	GROW(r->tags, r->tags_cap, r->ntags + n);
	memcpy(r->tags + r->ntags, s, n);
	r->ntags += n;
	return (uint32_t)(r->ntags - n);
}

static void note_stream(struct recorder *r, gpuStream_t s)
{
	for (size_t i = 0; i < r->nstreams; i++)
		if (r->streams[i] == s)
			return;
	GROW(r->streams, r->streams_cap, r->nstreams + 1);
	r->streams[r->nstreams++] = s;
}

/* In replay: the event the graph records at this point must be on s. */
static void replay_check(struct recorder *r, int ev, gpuStream_t s)
{
	if ((size_t)ev >= r->cap_used || r->ev_stream[ev] != s)
		r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
				   "recorder: step %lld differs from the captured one at event %d",
				   (long long)r->step, ev);
}

/* A timed point on s: eager, an event record; capture, an external
 * event-record node (it records when the graph runs); replay, nothing. */
static int record(struct recorder *r, gpuStream_t s)
{
	int ev = take_event(r);

	if (ev < 0)
		return -1;
	switch (r->mode) {
	case RM_EAGER:
		r->st = GPU_CALL(&r->err, gpuEventRecord(r->pool[ev], s));
		break;
	case RM_CAPTURE:
		GROW(r->ev_stream, r->ev_stream_cap, (size_t)ev + 1);
		r->ev_stream[ev] = s;
		r->st = GPU_CALL(&r->err, gpuEventRecordWithFlags(r->pool[ev], s, gpuEventRecordExternal));
		break;
	case RM_REPLAY:
		replay_check(r, ev, s);
		break;
	}
	return r->st == AORTA_OK ? ev : -1;
}

/* Makes compute wait for the work enqueued so far on s (rec_collect's
 * join).  In a capture the record is an ordinary one: an edge of the
 * graph, not a node that records. */
static void join_into(struct recorder *r, gpuStream_t s, gpuStream_t compute)
{
	int ev = take_event(r);

	if (ev < 0)
		return;
	switch (r->mode) {
	case RM_EAGER:
	case RM_CAPTURE:
		if (r->mode == RM_CAPTURE) {
			GROW(r->ev_stream, r->ev_stream_cap, (size_t)ev + 1);
			r->ev_stream[ev] = s;
		}
		r->st = GPU_CALL(&r->err, gpuEventRecord(r->pool[ev], s));
		if (r->st == AORTA_OK)
			r->st = GPU_CALL(&r->err, gpuStreamWaitEvent(compute, r->pool[ev], 0));
		break;
	case RM_REPLAY:
		replay_check(r, ev, s);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* lifecycle                                                           */
/* ------------------------------------------------------------------ */

enum aorta_status rec_init(struct recorder **out, const struct gpu_streams *g,
			   size_t expected_ranges, struct aorta_error *e)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	enum aorta_status st;

	*out = NULL;
	r->g = g;
	r->ev_start = -1;
	st = pool_grow(r, 2 * expected_ranges + 2 + GS__COUNT, e);
	if (st != AORTA_OK) {
		rec_free(r, NULL);
		return st;
	}
	GROW(r->slot, r->slot_cap, expected_ranges + 1);
	GROW(r->tags, r->tags_cap, 64 * (expected_ranges + 1));
	GROW(r->streams, r->streams_cap, GS__COUNT + 1);
	*out = r;
	return AORTA_OK;
}

enum aorta_status rec_free(struct recorder *r, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;

	if (!r)
		return AORTA_OK;
	for (size_t i = 0; i < r->npool; i++) {
		enum aorta_status s1 = GPU_CALL(st == AORTA_OK ? e : NULL, gpuEventDestroy(r->pool[i]));
		if (st == AORTA_OK)
			st = s1;
	}
	free(r->pool);
	free(r->slot);
	free(r->mark);
	free(r->tags);
	free(r->streams);
	free(r->out);
	free(r->mout);
	free(r->ev_stream);
	free(r);
	return st;
}

/* ------------------------------------------------------------------ */
/* the hot path                                                        */
/* ------------------------------------------------------------------ */

void rec_step_begin(struct recorder *r, int64_t step)
{
	r->used = 0;
	r->nslot = r->nmark = r->ntags = r->nstreams = 0;
	r->step = step;
	note_stream(r, r->g->s[GS_COMPUTE]);
	r->ev_start = record(r, r->g->s[GS_COMPUTE]);
}

int rec_begin_on(struct recorder *r, gpuStream_t s, int label, const char *tag,
		 enum rec_kind kind, const char *function)
{
	int ev;
	struct slot *sl;

	if (r->st != AORTA_OK || r->ev_start < 0)
		return -1;
	ev = record(r, s);
	if (ev < 0)
		return -1;
	note_stream(r, s);
	GROW(r->slot, r->slot_cap, r->nslot + 1);
	sl = &r->slot[r->nslot];
	sl->s = s;
	sl->label = label;
	sl->kind = kind;
	sl->tag = keep_str(r, tag ? tag : "");
	sl->fn = keep_str(r, function);
	sl->evb = ev;
	sl->eve = -1;
	return (int)r->nslot++;
}

int rec_begin_fn(struct recorder *r, int stream_id, const char *tag, enum rec_kind kind,
		 const char *function)
{
	if (stream_id < 0 || stream_id >= GS__COUNT) {
		if (r->st == AORTA_OK)
			r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
					   "recorder: stream id %d out of range", stream_id);
		return -1;
	}
	return rec_begin_on(r, r->g->s[stream_id], stream_id, tag, kind, function);
}

int rec_begin(struct recorder *r, int stream_id, const char *tag, enum rec_kind kind)
{
	return rec_begin_fn(r, stream_id, tag, kind, NULL);
}

void rec_end(struct recorder *r, int h)
{
	if (h < 0 || (size_t)h >= r->nslot || r->st != AORTA_OK)
		return;
	if (r->slot[h].eve >= 0) {
		r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
				   "recorder: range '%s' ended twice", r->tags + r->slot[h].tag);
		return;
	}
	r->slot[h].eve = record(r, r->slot[h].s);
}

void rec_marker(struct recorder *r, int stream_id, const char *tag)
{
	int ev;

	if (r->st != AORTA_OK || r->ev_start < 0 || stream_id < 0 || stream_id >= GS__COUNT)
		return;
	ev = record(r, r->g->s[stream_id]);
	if (ev < 0)
		return;
	GROW(r->mark, r->mark_cap, r->nmark + 1);
	r->mark[r->nmark].label = stream_id;
	r->mark[r->nmark].tag = keep_str(r, tag ? tag : "");
	r->mark[r->nmark].ev = ev;
	r->nmark++;
}

/* ------------------------------------------------------------------ */
/* collection                                                          */
/* ------------------------------------------------------------------ */

static int64_t ms_to_ns(float ms)
{
	return (int64_t)llround((double)ms * 1e6);
}

enum aorta_status rec_collect(struct recorder *r, struct rec_step *out, struct aorta_error *e)
{
	gpuStream_t compute = r->g->s[GS_COMPUTE];
	int ev_end = -1;
	float ms;

	memset(out, 0, sizeof(*out));
	if (r->st == AORTA_OK && r->ev_start < 0)
		r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
				   "recorder: rec_collect without rec_step_begin");
	for (size_t i = 0; r->st == AORTA_OK && i < r->nslot; i++)
		if (r->slot[i].eve < 0)
			r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
					   "recorder: range '%s' on stream %d was never ended",
					   r->tags + r->slot[i].tag, r->slot[i].label);
	/* join every stream used into compute, then one end event there */
	for (size_t i = 0; r->st == AORTA_OK && i < r->nstreams; i++)
		if (r->streams[i] != compute)
			join_into(r, r->streams[i], compute);
	if (r->st == AORTA_OK)
		ev_end = record(r, compute);
	if (r->st == AORTA_OK && r->mode == RM_CAPTURE) {
		/* captured, not run: the graph's replays are collected */
		r->cap_used = r->used;
		out->step = r->step;
		r->ev_start = -1;
		return AORTA_OK;
	}
	if (r->st == AORTA_OK && r->mode == RM_REPLAY && r->used != r->cap_used)
		r->st = aorta_fail(&r->err, AORTA_EINTERNAL, "", 0, -1,
				   "recorder: step %lld took %zu events, the captured one %zu",
				   (long long)r->step, r->used, r->cap_used);
	/* replay: the graph was launched on compute and ends with the end
	 * event, so waiting for the stream is waiting for that event */
	if (r->st == AORTA_OK)
		r->st = r->mode == RM_REPLAY ? GPU_CALL(&r->err, gpuStreamSynchronize(compute))
					     : GPU_CALL(&r->err, gpuEventSynchronize(r->pool[ev_end]));
	if (r->st != AORTA_OK)
		goto fail;

	gpuEvent_t start = r->pool[r->ev_start];
	GPU_CHECK_GOTO(&r->err, r->st, gpuEventElapsedTime(&ms, start, r->pool[ev_end]), fail);
	out->total_ns = ms_to_ns(ms);
	GROW(r->out, r->out_cap, r->nslot + 1);
	for (size_t i = 0; i < r->nslot; i++) {
		const struct slot *sl = &r->slot[i];
		struct rec_range *o = &r->out[i];
		float b, en;
		GPU_CHECK_GOTO(&r->err, r->st, gpuEventElapsedTime(&b, start, r->pool[sl->evb]), fail);
		GPU_CHECK_GOTO(&r->err, r->st, gpuEventElapsedTime(&en, start, r->pool[sl->eve]), fail);
		o->stream = sl->label;
		o->kind = sl->kind;
		o->tag = r->tags + sl->tag;
		o->function = sl->fn == NO_STR ? NULL : r->tags + sl->fn;
		o->start_ns = ms_to_ns(b);
		o->end_ns = ms_to_ns(en);
	}
	GROW(r->mout, r->mout_cap, r->nmark + 1);
	for (size_t i = 0; i < r->nmark; i++) {
		float t;
		GPU_CHECK_GOTO(&r->err, r->st, gpuEventElapsedTime(&t, start, r->pool[r->mark[i].ev]), fail);
		r->mout[i].stream = r->mark[i].label;
		r->mout[i].tag = r->tags + r->mark[i].tag;
		r->mout[i].time_ns = ms_to_ns(t);
	}
	out->step = r->step;
	out->ranges = r->out;
	out->nranges = r->nslot;
	out->marks = r->mout;
	out->nmarks = r->nmark;
	out->pool_events = (unsigned)r->npool;
	out->pool_grown = r->grown;
	r->ev_start = -1;
	return AORTA_OK;

fail:
	{
		enum aorta_status st = r->st;
		if (e)
			*e = r->err;
		r->st = AORTA_OK;
		r->ev_start = -1;
		memset(&r->err, 0, sizeof(r->err));
		return st;
	}
}

/* ------------------------------------------------------------------ */
/* graph mode                                                          */
/* ------------------------------------------------------------------ */

enum aorta_status rec_capture_begin(struct recorder *r, struct aorta_error *e)
{
	if (r->mode != RM_EAGER || r->ev_start >= 0)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "recorder: capture begun inside a step or a second time");
	r->mode = RM_CAPTURE;
	r->cap_used = 0;
	r->st = AORTA_OK;
	return AORTA_OK;
}

enum aorta_status rec_capture_end(struct recorder *r, int keep, struct aorta_error *e)
{
	if (r->mode != RM_CAPTURE)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "recorder: capture end without a capture");
	if (keep && r->cap_used == 0)
		aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
			   "recorder: the captured step did not end with rec_collect");
	int failed = keep && r->cap_used == 0;
	r->mode = keep && !failed ? RM_REPLAY : RM_EAGER;
	if (r->mode == RM_EAGER)
		r->cap_used = 0;
	r->ev_start = -1;
	r->st = AORTA_OK;
	memset(&r->err, 0, sizeof(r->err));
	return failed ? AORTA_EINTERNAL : AORTA_OK;
}

void rec_graph_release(struct recorder *r)
{
	r->mode = RM_EAGER;
	r->cap_used = 0;
	r->ev_start = -1;
}

int rec_replaying(const struct recorder *r)
{
	return r->mode == RM_REPLAY;
}

