/*
 * trainer_gpu.c - the training loop of aorta train on one GPU.
 *
 * A step, as upstream's train.py lays it out (UPSTREAM.md section 2), but
 * with each phase bracketed by events on the stream where it really runs:
 *   aux:      prefetch (H2D copy of the batch from pinned memory)
 *   compute:  waits for the copy; forward; backward   (x gradient_accumulation)
 *   aux:      waits for compute (upstream forgot this); grad_clip; optimizer
 *   compute:  marker <tag>_end; the recorder joins all streams once
 * Gradient accumulation works: each micro-batch adds d(loss / accum)/dp,
 * so the update uses the mean gradient.  fp16 uses a static loss scale
 * (2^10), undone in the clip scale; bf16 and fp16 run the GEMMs in reduced
 * precision with fp32 master weights and fp32 accumulation.
 *
 * Data: the synthetic dataset (model.h) is a pure function of (seed,
 * sample).  Generating 4 MB of normal variates per step on the host would
 * cost more than the GPU step, so a fixed number of distinct batches
 * (--data-batches, default min(num_samples / batch, 32)) is generated in
 * parallel at start into pinned memory and cycled through; every step still
 * copies its batch host to device on the aux stream, as upstream does.
 *
 * compile.enabled: the step as a CUDA graph.  Step 0 runs eagerly (module
 * loading, cuBLAS and workspace allocation must not land in a capture);
 * step 1 is captured once across both streams (fork/join with events:
 * zero_grad, each micro-batch's prefetch and forward/backward, clip, AdamW,
 * the loss/norm copies, the recorder's events as external event-record
 * nodes) and instantiated; every later step is one cudaGraphLaunch on the
 * compute stream.  What changes per step is not baked in: lr and t (AdamW)
 * and each micro-batch's dropout seed sit in a pinned struct that the host
 * fills before each launch and the graph's first node copies to the device,
 * where the kernels read them (gpu_adamw_dev, gpu_ops_set_seed_dev).  The
 * cached batch is chosen by retargeting the graph's H2D copy nodes
 * (cudaGraphExecMemcpyNodeSetParams1D, 4 per micro-batch, ~1 us each):
 * one instantiation and one graph whatever --data-batches is, where a graph
 * per cached batch (or per combination, with accumulation) would multiply
 * instantiation time and graph memory.  If capture or instantiation fails,
 * the CUDA error is logged and the run continues eagerly (from the same
 * step); debug.graph_fail forces that path.  Losses match eager mode
 * up to the atomics' summation order (the seeds, lr and t are the same
 * values).
 *
 * Distributed (world > 1, or debug.distributed_executor): the same
 * loop, but a step is the batch copy on aux, then the FSDP / DDP schedule
 * of dist.h run by the GPU executor (dist_gpu.h: per-group compute ranges,
 * every collective bracketed on its own stream, clip and AdamW on the
 * local shard on aux), then the same end marker and one host wait.  Each
 * rank caches the samples of its slice of every global batch (rank r of W
 * takes samples i*W*b + r*b .. +b-1 of cached batch i, world 1's batch i at
 * batch size W*b).  With gradient_accumulation k, micro-batch j of step s
 * is cached batch s*k + j as at world 1, so W ranks x k micro-batches x b
 * are world 1's batch W*k*b (with k times world 1's --data-batches); the
 * executor runs the k micro-batches in one schedule, uploading batch j > 0
 * through load_micro, and reduces the gradients once (no_sync).  With
 * training.inject_allreduce_copies the executor adds upstream's all-reduce
 * stress at the end of every step (dist_gpu.h).  fsdp.reduce_dtype bf16
 * makes the executor reduce the gradients in bf16 (dist.h), and every
 * collective's range in the JSONL carries metadata "bytes" (its message
 * size at its real element size) and "dtype".  Graph mode is world 1
 * only.  The batch copy of step s+1 is enqueued on aux at the start of step
 * s, into the model's spare batch buffers (gpu_model_spare_batch), and
 * swapped in when step s+1 begins, so no step waits for its own upload (the
 * copy's range, tagged with step s+1, lies in step s);
 * debug.prefetch_next=false restores the copy at the start of each step.
 * Likewise the first all-gather of step s+1 is issued at the end of step s,
 * once AdamW has updated that group's shard (dist_gpu_set_next), so it runs
 * beside the rest of AdamW; debug.pregather=false turns that off.
 *
 * Outputs: <output_dir>/rank_<NN>_metrics.jsonl (metrics.c, flushed per
 * step), <output_dir>/rank<N>.log, and CUPTI Kineto traces under
 * <output_dir>/torch_profiler/rank<N>/ when profiling.enabled (every rank
 * that has a process of its own; none when ranks are threads of one
 * process).  SIGINT/SIGTERM end the run after the current step (at
 * world > 1 after the step where some rank saw the signal, on every rank).
 */
#include "train/trainer.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu/cupti.h"
#include "gpu/gpu.h"
#include "gpu/nvtx.h"
#include "gpu/recorder.h"
#include "gpu/telemetry.h"
#include "comm/comm.h"
#include "comm/nccl_comm.h"
#include "train/dist.h"
#include "train/launch_train.h"
#include "train/dist_gpu.h"
#include "train/metrics.h"
#include "train/model.h"
#include "train/model_gpu.h"
#include "kernels/ops_gpu.h"
#include "kernels/rng.h"

#define FP16_LOSS_SCALE 1024.0f

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* ---- data ----------------------------------------------------------------- */

/* Cached batch i holds samples i * stride + offset .. + B - 1 (stride B,
 * offset 0 at world 1; stride W*B, offset rank*B for rank `rank` of W). */
struct data_cache {
	struct batch *b;
	int n;
	const struct model_dims *d;
	uint64_t seed;
	int B;
	uint64_t stride, offset;
};

struct gen_arg { struct data_cache *c; int first, step; };

static void *gen_worker(void *p)
{
	struct gen_arg *a = p;
	for (int i = a->first; i < a->c->n; i += a->step)
		batch_fill(&a->c->b[i], a->c->d, a->c->seed, (uint64_t)i * a->c->stride + a->c->offset);
	return NULL;
}

static enum aorta_status data_cache_init(struct data_cache *c, const struct model_dims *d, int B,
					 int n, uint64_t seed, uint64_t stride, uint64_t offset,
					 struct aorta_error *e)
{
	size_t BT = (size_t)B * (size_t)d->T;
	memset(c, 0, sizeof(*c));
	c->b = xcalloc((size_t)n, sizeof(*c->b));
	c->d = d;
	c->seed = seed;
	c->B = B;
	c->stride = stride;
	c->offset = offset;
	for (int i = 0; i < n; i++) {
		struct batch *b = &c->b[i];
		b->B = B;
		void *p1, *p2, *p3, *p4;
		if (GPU_CALL(e, gpuMallocHost(&p1, BT * (size_t)d->F * (size_t)d->D * sizeof(float))) ||
		    GPU_CALL(e, gpuMallocHost(&p2, BT * (size_t)d->S * sizeof(int32_t))) ||
		    GPU_CALL(e, gpuMallocHost(&p3, BT * sizeof(float))) ||
		    GPU_CALL(e, gpuMallocHost(&p4, BT * sizeof(float))))
			return AORTA_EGPU;
		b->dense = p1;
		b->cat = p2;
		b->target = p3;
		b->weight = p4;
		c->n = i + 1;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = cores > 1 ? (int)(cores < 16 ? cores : 16) : 1;
	if (nt > n)
		nt = n;
	pthread_t th[16];
	struct gen_arg ga[16];
	for (int t = 0; t < nt; t++) {
		ga[t] = (struct gen_arg){ c, t, nt };
		pthread_create(&th[t], NULL, gen_worker, &ga[t]);
	}
	for (int t = 0; t < nt; t++)
		pthread_join(th[t], NULL);
	return AORTA_OK;
}

static void data_cache_free(struct data_cache *c)
{
	for (int i = 0; i < c->n; i++) {
		gpuFreeHost(c->b[i].dense);
		gpuFreeHost(c->b[i].cat);
		gpuFreeHost(c->b[i].target);
		gpuFreeHost(c->b[i].weight);
	}
	free(c->b);
	memset(c, 0, sizeof(*c));
}

/* ---- helpers --------------------------------------------------------------- */

static int mkdir_p(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void logline(FILE *log, int quiet, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logline(FILE *log, int quiet, const char *fmt, ...)
{
	char msg[1024], ts[64];
	va_list ap;
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log) {
		fprintf(log, "%s | INFO | aorta.train | %s\n", ts, msg);
		fflush(log);
	}
	if (!quiet)
		fprintf(stderr, "aorta: %s\n", msg);
}

/* debug.instrumented = false (formerly AORTA_TRAIN_UNINSTRUMENTED=1) runs
 * the same loop with no events, no recorder ranges and no JSONL
 * (bench/train_speed measures the instrumentation's cost against it);
 * steps are then timed by the host clock only.  The step's recorder
 * pointer (step_ctx.rec, phase_ctx.rec) is NULL then. */

/* How a step's work is issued: eagerly, into a stream capture, or not at
 * all because a graph replay does it (the recorder still takes the step's
 * tags, in the same order). */
enum step_mode { STEP_EAGER, STEP_CAPTURE, STEP_REPLAY };

/* A phase: events on its stream (the recorder) and an NVTX range named by
 * the tag's phase ("forward", "optimizer", ...) for Nsight Systems.  In a
 * replay the host issues nothing, so no NVTX range either. */
static int rbegin(struct recorder *r, int stream, const char *tag, enum rec_kind k, int nvtx)
{
	if (nvtx) {
		const char *phase = strrchr(tag, '_');
		nvtx_push(phase ? phase + 1 : tag);
	}
	return r ? rec_begin(r, stream, tag, k) : -1;
}

static void rend(struct recorder *r, int h, int nvtx)
{
	if (r)
		rec_end(r, h);
	if (nvtx)
		nvtx_pop();
}

struct phase_ctx {
	struct recorder *rec;
	int handle;
	int nvtx;
	char tag[128];
};

/* Between forward and backward: close "forward", open "backward". */
static void on_phase(void *p)
{
	struct phase_ctx *c = p;
	rend(c->rec, c->handle, c->nvtx);
	c->handle = rbegin(c->rec, GS_COMPUTE, c->tag, REC_COMPUTE, c->nvtx);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- a step's record, written while the GPU runs the next step ------------- */

/* The recorder's arrays are reused by the next step, so the collected step
 * is copied here; its JSONL line and log line are produced after the next
 * step's work is enqueued, off the GPU's critical path. */
struct pending {
	int valid;
	struct step_record sr;
	struct prof_range *r;
	struct prof_marker *m;
	size_t rcap, mcap;
	char *text;               /* tags and metadata */
	size_t tcap;
	struct telemetry_sample ts;
};

static char *pend_str(struct pending *p, size_t *used, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = p->text + *used;
	memcpy(d, s, n);
	*used += n;
	return d;
}

/* The step's ranges and markers into p; a collective's range gets
 * metadata {"function", and with the distributed executor dx "bytes" (its
 * message size, comm_coll_bytes) and "dtype"}. */
static void pending_take(struct pending *p, const struct rec_step *rs, const struct dist_gpu *dx)
{
	size_t need = 0;
	for (size_t i = 0; i < rs->nranges; i++)
		need += strlen(rs->ranges[i].tag) + 1 + (rs->ranges[i].function ? 128 : 0);
	for (size_t i = 0; i < rs->nmarks; i++)
		need += strlen(rs->marks[i].tag) + 1;
	GROW(p->text, p->tcap, need + 1);
	GROW(p->r, p->rcap, rs->nranges + 1);
	GROW(p->m, p->mcap, rs->nmarks + 1);
	size_t used = 0;
	for (size_t i = 0; i < rs->nranges; i++) {
		const struct rec_range *r = &rs->ranges[i];
		p->r[i] = (struct prof_range){ gpu_stream_name(r->stream), pend_str(p, &used, r->tag),
					       r->start_ns, r->end_ns, NULL };
		if (r->function) {
			char md[128];
			uint64_t bytes = 0;
			enum comm_dtype dt = COMM_F32;
			if (dx && dist_gpu_coll_bytes(dx, r->tag, &bytes, &dt))
				snprintf(md, sizeof(md), "{\"function\":\"%.40s\",\"bytes\":%llu,\"dtype\":\"%s\"}",
					 r->function, (unsigned long long)bytes, comm_dtype_name(dt));
			else
				snprintf(md, sizeof(md), "{\"function\":\"%.40s\"}", r->function);
			p->r[i].metadata = pend_str(p, &used, md);
		}
	}
	for (size_t i = 0; i < rs->nmarks; i++)
		p->m[i] = (struct prof_marker){ gpu_stream_name(rs->marks[i].stream),
						pend_str(p, &used, rs->marks[i].tag), rs->marks[i].time_ns, NULL };
	p->sr.ranges = p->r;
	p->sr.nranges = rs->nranges;
	p->sr.markers = p->m;
	p->sr.nmarkers = rs->nmarks;
	p->sr.total_ns = rs->total_ns;
	p->valid = 1;
}


/* Writes the pending step's JSONL line (flushed) and, every log_interval
 * steps, its log line. */
static enum aorta_status emit(struct pending *p, FILE *mf, FILE *log, int quiet, long li, long total,
			      const char *path, struct aorta_error *e)
{
	const struct step_record *sr = &p->sr;
	p->valid = 0;
	if (metrics_write(mf, sr))
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "write failed: %s", strerror(errno));
	if (sr->global_step % li == 0 || sr->global_step + 1 == total) {
		struct step_overlap ov;
		metrics_overlap(sr, &ov);
		logline(log, quiet, "epoch=%d step=%ld loss=%.5f lr=%.6f step=%.3fms overlap=%.3fms compute=%.3fms",
			sr->epoch, sr->global_step, sr->loss, sr->lr, (double)sr->total_ns / 1e6,
			(double)ov.compute_comm_ns / 1e6, (double)ov.compute_ns / 1e6);
	}
	return AORTA_OK;
}

static void pending_free(struct pending *p)
{
	free(p->r);
	free(p->m);
	free(p->text);
	memset(p, 0, sizeof(*p));
}

/* ---- one step ---------------------------------------------------------------- */

/* Per-step values a graph reads on device: the host fills the pinned copy
 * before each launch and the graph's first node copies it to the device.
 * Writing it is safe then: the previous launch has completed (the step's
 * one host wait).  seed[] has one entry per micro-batch. */
struct step_params {
	struct gpu_adam_hp hp;   /* AdamW lr, bias corrections for step t = s + 1 */
	uint64_t seed[];         /* dropout seed of each micro-batch */
};

struct step_ctx {
	const struct train_config *cfg;
	struct gpu_model *gm;
	const struct gpu_streams *gs;
	struct recorder *rec;
	const struct data_cache *data;
	struct phase_ctx *ph;
	gpuEvent_t ev_fork, ev_data, ev_consumed, ev_grads;
	float *loss_acc, *h_loss;
	double *h_sumsq;
	int accum;
	float loss_scale;
	uint64_t seed;
	long per_epoch;
	int rank;
	struct dist_gpu *dx;                /* the distributed executor, NULL: single-GPU step */
	long cur_step;                      /* the distributed step being enqueued (load_micro) */
	/* cross-step batch prefetch (distributed executor): step pre_step's
	 * first batch is in gm's spare buffers, complete at ev_pre on aux */
	long nsteps;                        /* steps of the run */
	int prefetch_next;                  /* 0: debug.prefetch_next = false */
	int pregather;                      /* 0: debug.pregather = false (dist_gpu_set_next) */
	int graph_fail;                     /* debug.graph_fail: the capture fails on purpose */
	int pre_valid;
	long pre_step;
	/* two, by the parity of the step uploaded: step s's compute waits on
	 * one while step s+1's upload records the other (re-recording the one
	 * waited on before the wait is enqueued would wait for the new copy) */
	gpuEvent_t ev_pre[2];
	/* graph mode */
	struct step_params *hpar, *dpar;   /* pinned host, device */
	size_t par_bytes;
	gpuGraphNode_t *copy_node;          /* [accum][GPU_MODEL_BATCH_COPIES], NULL where no copy */
	gpuGraph_t graph;                   /* kept while exec lives: copy_node are its nodes */
	gpuGraphExec_t exec;
};

static void step_position(const struct step_ctx *x, long s, int *epoch, int *estep)
{
	long spe = x->per_epoch > 0 ? x->per_epoch / x->accum : 1;
	*epoch = (int)(spe > 0 ? s / spe : 0);
	*estep = (int)(spe > 0 ? s % spe : s);
}

static const struct batch *batch_of(const struct step_ctx *x, long s, int mb)
{
	return &x->data->b[(s * x->accum + mb) % x->data->n];
}

/* Dropout seed of micro-batch mb of step s; the rank is mixed in (rank 0
 * keeps the single-GPU seeds). */
static uint64_t seed_of(const struct step_ctx *x, long s, int mb)
{
	return rng_mix(x->seed ^ (uint64_t)(s * x->accum + mb) * 0x9e37ull ^ ((uint64_t)x->rank << 48));
}

/* The distributed executor's micro-batch loader: micro-batch mb of the
 * step being enqueued, uploaded on aux under the step's prefetch tag. */
static enum aorta_status load_micro(void *ctx, int mb, gpuStream_t aux, uint64_t *seed, struct aorta_error *e)
{
	struct step_ctx *x = ctx;
	int epoch, estep;
	char tag[128];
	step_position(x, x->cur_step, &epoch, &estep);
	snprintf(tag, sizeof(tag), "epoch%d_step%d_prefetch", epoch, estep);
	int h = rbegin(x->rec, GS_AUX, tag, REC_MEMCPY_H2D, 1);
	enum aorta_status st = gpu_model_upload_batch(x->gm, batch_of(x, x->cur_step, mb), aux, e);
	rend(x->rec, h, 1);
	*seed = seed_of(x, x->cur_step, mb);
	return st;
}

static double lr_of(const struct step_ctx *x, long s)
{
	const struct train_config *c = x->cfg;
	return lr_at(c->optimizer.lr, s, c->scheduler.warmup_steps, c->scheduler.total_steps);
}

/* Issues step s (mode STEP_EAGER or STEP_CAPTURE) or, for STEP_REPLAY, only
 * the recorder's calls with this step's tags:
 *   compute: [capture: per-step values H2D] fork; zero_grad; loss = 0
 *   per micro-batch:
 *     aux:     waits for the fork (mb 0) or the previous micro-batch's
 *              compute; prefetch (H2D of the batch)
 *     compute: waits for the copy; forward; backward; loss += ...
 *   aux:      waits for compute; grad_clip; optimizer; loss and norm D2H
 * In a capture the batch copies' nodes are kept (x->copy_node) to be
 * retargeted per replay, and dropout seeds, lr and t are read on device. */
static enum aorta_status enqueue_step(struct step_ctx *x, long s, enum step_mode mode, struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	struct recorder *rec = x->rec;
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX];
	const int run = mode != STEP_REPLAY;
	enum aorta_status st;
	int epoch, estep;
	char tag[128];

	step_position(x, s, &epoch, &estep);
	x->ph->nvtx = run;
	if (rec)
		rec_step_begin(rec, s);
	if (run) {
		gm->stream = cs;
		gpu_ops_set_stream(gm->ops, cs);
		if (mode == STEP_CAPTURE &&
		    (st = GPU_CALL(e, gpuMemcpyAsync(x->dpar, x->hpar, x->par_bytes, gpuMemcpyHostToDevice, cs))))
			return st;
		if ((st = GPU_CALL(e, gpuEventRecord(x->ev_fork, cs))) || (st = gpu_model_zero_grad(gm, e)) ||
		    (st = GPU_CALL(e, gpuMemsetAsync(x->loss_acc, 0, sizeof(float), cs))))
			return st;
	}
	for (int mb = 0; mb < x->accum; mb++) {
		if (run) {
			/* the copy must not overwrite the batch the compute stream still
			 * reads; mb 0 follows the previous step, which ended joined */
			if ((st = GPU_CALL(e, gpuStreamWaitEvent(as, mb ? x->ev_consumed : x->ev_fork, 0))))
				return st;
		}
		snprintf(tag, sizeof(tag), "epoch%d_step%d_prefetch", epoch, estep);
		int h = rbegin(rec, GS_AUX, tag, REC_MEMCPY_H2D, run);
		if (run) {
			struct gpu_copy cp[GPU_MODEL_BATCH_COPIES];
			if ((st = gpu_model_batch_copies(gm, batch_of(x, s, mb), cp, e)))
				return st;
			for (int i = 0; i < GPU_MODEL_BATCH_COPIES; i++) {
				gpuGraphNode_t *node = x->copy_node ? &x->copy_node[mb * GPU_MODEL_BATCH_COPIES + i] : NULL;
				if (node)
					*node = NULL;
				if (!cp[i].bytes)
					continue;
				if ((st = GPU_CALL(e, gpuMemcpyAsync(cp[i].dst, cp[i].src, cp[i].bytes,
								     gpuMemcpyHostToDevice, as))))
					return st;
				if (mode == STEP_CAPTURE && (st = GPU_CALL(e, gpu_capture_last_node(as, node))))
					return st;
			}
		}
		rend(rec, h, run);
		if (run && ((st = GPU_CALL(e, gpuEventRecord(x->ev_data, as))) ||
			    (st = GPU_CALL(e, gpuStreamWaitEvent(cs, x->ev_data, 0)))))
			return st;
		snprintf(tag, sizeof(tag), "epoch%d_step%d_forward", epoch, estep);
		x->ph->handle = rbegin(rec, GS_COMPUTE, tag, REC_COMPUTE, run);
		snprintf(x->ph->tag, sizeof(x->ph->tag), "epoch%d_step%d_backward", epoch, estep);
		if (run) {
			if (mode == STEP_CAPTURE)
				gpu_ops_set_seed_dev(gm->ops, &x->dpar->seed[mb]);
			st = gpu_model_forward_backward(gm, seed_of(x, s, mb), 1, x->loss_scale, e);
			gpu_ops_set_seed_dev(gm->ops, NULL);
			if (st)
				return st;
		} else {
			on_phase(x->ph);
		}
		rend(rec, x->ph->handle, run);
		if (run) {
			gpu_add(gm->ops, x->loss_acc, x->loss_acc, gm->loss, 1);
			if ((st = GPU_CALL(e, gpuEventRecord(x->ev_consumed, cs))))
				return st;
		}
	}
	/* clip and optimizer on aux, after the gradients exist */
	if (run) {
		if ((st = GPU_CALL(e, gpuEventRecord(x->ev_grads, cs))) ||
		    (st = GPU_CALL(e, gpuStreamWaitEvent(as, x->ev_grads, 0))))
			return st;
		gm->stream = as;
		gpu_ops_set_stream(gm->ops, as);
	}
	snprintf(tag, sizeof(tag), "epoch%d_step%d_grad_clip", epoch, estep);
	int h = rbegin(rec, GS_AUX, tag, REC_COMPUTE, run);
	if (run && (st = gpu_model_grad_norm_clip(gm, (float)x->cfg->training.grad_clip_norm, e)))
		return st;
	rend(rec, h, run);
	snprintf(tag, sizeof(tag), "epoch%d_step%d_optimizer", epoch, estep);
	h = rbegin(rec, GS_AUX, tag, REC_COMPUTE, run);
	if (run) {
		st = mode == STEP_CAPTURE ? gpu_model_adamw_dev(gm, &x->dpar->hp, e)
					  : gpu_model_adamw(gm, (float)lr_of(x, s), (int)(s + 1), e);
		if (st)
			return st;
	}
	rend(rec, h, run);
	/* loss and norm come back with the step's one synchronisation */
	if (run && ((st = GPU_CALL(e, gpuMemcpyAsync(x->h_loss, x->loss_acc, sizeof(float),
						     gpuMemcpyDeviceToHost, as))) ||
		    (st = GPU_CALL(e, gpuMemcpyAsync(x->h_sumsq, gm->sumsq, sizeof(double),
						     gpuMemcpyDeviceToHost, as)))))
		return st;
	return AORTA_OK;
}

/* Issues step s of the distributed executor (eager only):
 *   compute: fork
 *   aux:     waits for the fork; prefetch (H2D of this rank's batch)
 *   the schedule (dist_gpu_step: the comm streams follow the fork, compute
 *            waits for the copy; collectives on their streams, clip and
 *            optimizer on aux, every stream joined back into compute at
 *            the end) */
static enum aorta_status enqueue_dist_step(struct step_ctx *x, long s, struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX];
	enum aorta_status st;
	int epoch, estep;
	char tag[128], prefix[64];

	step_position(x, s, &epoch, &estep);
	x->cur_step = s;
	x->ph->nvtx = 1;
	if (x->rec)
		rec_step_begin(x->rec, s);
	gm->stream = cs;
	gpu_ops_set_stream(gm->ops, cs);
	if ((st = GPU_CALL(e, gpuEventRecord(x->ev_fork, cs))) || (st = GPU_CALL(e, gpuStreamWaitEvent(as, x->ev_fork, 0))))
		return st;
	snprintf(prefix, sizeof(prefix), "epoch%d_step%d", epoch, estep);
	gpuEvent_t data_ready = x->ev_data;
	if (x->pre_valid && x->pre_step == s) {
		/* uploaded during the previous step: swap it in */
		gpu_model_swap_batch(gm);
		data_ready = x->ev_pre[s & 1];
	} else {
		snprintf(tag, sizeof(tag), "%s_prefetch", prefix);
		int h = rbegin(x->rec, GS_AUX, tag, REC_MEMCPY_H2D, 1);
		if ((st = gpu_model_upload_batch(gm, batch_of(x, s, 0), as, e)))
			return st;
		rend(x->rec, h, 1);
		if ((st = GPU_CALL(e, gpuEventRecord(x->ev_data, as))))
			return st;
	}
	x->pre_valid = 0;
	/* the next step's batch into the spare buffers, on aux while this step
	 * computes (the previous step, which last read them, is done: the host
	 * waited for it); its range, tagged with the next step, is in this step */
	if (x->prefetch_next && s + 1 < x->nsteps && !stop_requested) {
		int ne, ns;
		step_position(x, s + 1, &ne, &ns);
		snprintf(tag, sizeof(tag), "epoch%d_step%d_prefetch", ne, ns);
		int h = rbegin(x->rec, GS_AUX, tag, REC_MEMCPY_H2D, 1);
		if ((st = gpu_model_upload_spare(gm, batch_of(x, s + 1, 0), as, e)))
			return st;
		rend(x->rec, h, 1);
		if ((st = GPU_CALL(e, gpuEventRecord(x->ev_pre[(s + 1) & 1], as))))
			return st;
		x->pre_valid = 1;
		x->pre_step = s + 1;
	}
	/* the next step's first all-gather at the end of this one (every rank
	 * decides alike: on the step count only) */
	if (x->pregather && s + 1 < x->nsteps) {
		int ne, ns;
		char next[64];
		step_position(x, s + 1, &ne, &ns);
		snprintf(next, sizeof(next), "epoch%d_step%d", ne, ns);
		dist_gpu_set_next(x->dx, next);
	} else {
		dist_gpu_set_next(x->dx, NULL);
	}
	return dist_gpu_step(x->dx, prefix, data_ready, seed_of(x, s, 0), 1, x->loss_scale, (float)lr_of(x, s),
			     stop_requested != 0, e);
}

/* Ends step s: the end marker and the join of every stream into compute,
 * then (not in a capture) the step's one host wait; rs gets the collected
 * step when instrumented. */
static enum aorta_status finish_step(struct step_ctx *x, long s, enum step_mode mode, struct rec_step *rs,
				     struct aorta_error *e)
{
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX];
	enum aorta_status st;

	memset(rs, 0, sizeof(*rs));
	if (x->rec) {
		char tag[128];
		int epoch, estep;
		step_position(x, s, &epoch, &estep);
		snprintf(tag, sizeof(tag), "epoch%d_step%d_end", epoch, estep);
		rec_marker(x->rec, GS_COMPUTE, tag);
		return rec_collect(x->rec, rs, e);
	}
	if (mode != STEP_REPLAY && ((st = GPU_CALL(e, gpuEventRecord(x->ev_grads, as))) ||
				    (st = GPU_CALL(e, gpuStreamWaitEvent(cs, x->ev_grads, 0)))))
		return st;
	if (mode != STEP_CAPTURE && (st = GPU_CALL(e, gpuStreamSynchronize(cs))))
		return st;
	return AORTA_OK;
}

/* ---- graph mode ----------------------------------------------------------- */

/* Before each replay: this step's lr, t and seeds into the pinned struct,
 * and the graph's batch copies pointed at this step's cached batches. */
static enum aorta_status graph_prepare(struct step_ctx *x, long s, struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	enum aorta_status st;

	gpu_adam_hp_make(&x->hpar->hp, (float)lr_of(x, s), gm->beta1, gm->beta2, gm->eps, gm->weight_decay,
			 (int)(s + 1));
	for (int mb = 0; mb < x->accum; mb++) {
		struct gpu_copy cp[GPU_MODEL_BATCH_COPIES];
		x->hpar->seed[mb] = seed_of(x, s, mb);
		if ((st = gpu_model_batch_copies(gm, batch_of(x, s, mb), cp, e)))
			return st;
		for (int i = 0; i < GPU_MODEL_BATCH_COPIES; i++) {
			gpuGraphNode_t n = x->copy_node[mb * GPU_MODEL_BATCH_COPIES + i];
			if (n && (st = GPU_CALL(e, gpuGraphExecMemcpyNodeSetParams1D(x->exec, n, cp[i].dst,
										     cp[i].src, cp[i].bytes,
										     gpuMemcpyHostToDevice))))
				return st;
		}
	}
	return AORTA_OK;
}

/* Captures step s (the whole step, every stream, the recorder's events as
 * external nodes) and instantiates it into x->exec.  On failure returns
 * non-zero with the reason in *why (the first CUDA error, by its runtime
 * message), leaves the streams, the ops context and the recorder eager,
 * and nothing of step s has run.  debug.graph_fail makes the
 * capture fail on purpose (a stream synchronisation inside it), to test
 * this path. */
static int graph_capture(struct step_ctx *x, long s, struct aorta_error *why, size_t *nnodes)
{
	gpuStream_t cs = x->gs->s[GS_COMPUTE];
	gpuGraph_t g = NULL;
	struct aorta_error e2 = { 0 };
	struct rec_step rs;
	enum aorta_status st;

	memset(why, 0, sizeof(*why));
	if (x->rec && (st = rec_capture_begin(x->rec, why)))
		return st;
	if ((st = GPU_CALL(why, gpuStreamBeginCapture(cs, gpuStreamCaptureModeThreadLocal)))) {
		if (x->rec)
			rec_capture_end(x->rec, 0, NULL);
		return st;
	}
	st = enqueue_step(x, s, STEP_CAPTURE, why);
	if (!st && x->graph_fail)
		st = GPU_CALL(why, gpuStreamSynchronize(cs)); /* not allowed while capturing */
	if (!st)
		st = finish_step(x, s, STEP_CAPTURE, &rs, why);
	/* always end the capture, so every stream leaves capture mode */
	enum aorta_status st2 = GPU_CALL(st ? &e2 : why, gpuStreamEndCapture(cs, &g));
	if (!st)
		st = st2;
	if (!st && (st = GPU_CALL(why, gpuGraphGetNodes(g, NULL, nnodes))) == AORTA_OK)
		st = GPU_CALL(why, gpuGraphInstantiate(&x->exec, g, 0));
	if (x->rec && rec_capture_end(x->rec, st == AORTA_OK, st ? NULL : why) && !st)
		st = AORTA_EINTERNAL;
	if (st) {
		if (x->exec)
			gpuGraphExecDestroy(x->exec);
		x->exec = NULL;
		if (g)
			gpuGraphDestroy(g);
		g = NULL;
		gpu_ops_set_seed_dev(x->gm->ops, NULL);
		gpu_ops_clear_error(x->gm->ops);
		(void)gpuGetLastError();
		x->gm->stream = cs;
		gpu_ops_set_stream(x->gm->ops, cs);
	}
	x->graph = g;
	return st;
}

/* ---- the trainer: open, step, finish, close ---------------------------------- */

/* Everything one rank's run owns.  trainer_open fills it in order and
 * trainer_close releases whatever exists, whichever step failed: nothing
 * is held in a local of one function, so no early return can leak it. */
struct trainer {
	const struct train_config *cfg;
	struct trainer_opts o;
	struct comm *comm;
	int W, rank, dist, quiet, progress;
	int instrumented;                    /* debug.instrumented */
	int prefetch_next, pregather;        /* debug.prefetch_next, debug.pregather */
	struct dist_knobs knobs;
	struct dist_plan plan;
	struct dist_schedule sched;
	struct dist_gpu dx;
	int have_plan, have_dx, have_model, stop_all;
	struct model_dims d;
	struct param_layout lay;
	struct gpu_streams gs;
	struct recorder *rec;
	struct telemetry *tel;
	struct cupti_capture *cup;
	struct gpu_model gm;
	struct data_cache data;
	struct gpu_device_info dev;
	gpuEvent_t ev_fork, ev_data, ev_consumed, ev_grads, ev_pre[2];
	struct step_ctx x;
	struct phase_ctx ph;
	int graph_wanted, graph_failed;
	float *params_host, *loss_acc, *h_loss;
	double *h_sumsq;
	FILE *mf, *log;
	double *step_ms, *wall_ms;           /* [total]: GPU (recorder) and host step times */
	struct pending pend;
	int B, accum;
	long total, li, next, done;          /* steps: of the run, log interval, next to run, run */
	enum gpu_precision prec;
	uint64_t seed;
	struct trainer_result res;
};

void trainer_close(struct trainer *t)
{
	if (!t)
		return;
	if (t->x.exec) {
		gpuGraphExecDestroy(t->x.exec);
		if (t->rec)
			rec_graph_release(t->rec);
	}
	if (t->x.graph)
		gpuGraphDestroy(t->x.graph);
	if (t->x.hpar)
		gpuFreeHost(t->x.hpar);
	if (t->x.dpar)
		gpuFree(t->x.dpar);
	free(t->x.copy_node);
	if (t->cup) {
		struct aorta_error ce = { 0 };
		cupti_close(t->cup, &ce);
	}
	if (t->tel)
		telemetry_close(t->tel);
	if (t->mf)
		fclose(t->mf);
	if (t->log)
		fclose(t->log);
	free(t->step_ms);
	free(t->wall_ms);
	pending_free(&t->pend);
	if (t->h_loss)
		gpuFreeHost(t->h_loss);
	if (t->h_sumsq)
		gpuFreeHost(t->h_sumsq);
	free(t->params_host);
	if (t->loss_acc)
		gpuFree(t->loss_acc);
	data_cache_free(&t->data);
	if (t->have_dx)
		dist_gpu_release(&t->dx);
	if (t->have_model)
		gpu_model_release(&t->gm);
	gpuEvent_t ev[] = { t->ev_fork, t->ev_data, t->ev_consumed, t->ev_grads, t->ev_pre[0], t->ev_pre[1] };
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (ev[i])
			gpuEventDestroy(ev[i]);
	rec_free(t->rec, NULL);
	if (t->gs.s[0])
		gpu_streams_release(&t->gs, NULL);
	dist_schedule_release(&t->sched);
	if (t->have_plan)
		dist_plan_release(&t->plan);
	layout_release(&t->lay);
	free(t);
}

/* Device, memory check, streams, recorder, events. */
static enum aorta_status open_device(struct trainer *t, int device, struct aorta_error *e)
{
	const struct train_config *cfg = t->cfg;
	enum aorta_status st;
	size_t free_b = 0, total_b = 0;

	if ((st = gpu_select_device(device, &t->dev, e)) || (st = GPU_CALL(e, gpuMemGetInfo(&free_b, &total_b))))
		return st;
	uint64_t need = train_config_memory_bytes(cfg, t->W);
	if (need > free_b)
		return aorta_fail(e, AORTA_EINPUT, cfg->source, 0, -1,
				  "training.batch_size %d needs about %.2f GB of GPU memory, but %s has %.2f GB free",
				  t->B, (double)need / 1e9, t->dev.name, (double)free_b / 1e9);
	if ((st = gpu_streams_init(&t->gs, cfg->streams.high_priority_mask != 0, e)) ||
	    (st = rec_init(&t->rec, &t->gs, 16, e)))
		return st;
	gpuEvent_t *ev[] = { &t->ev_fork, &t->ev_data, &t->ev_consumed, &t->ev_grads, &t->ev_pre[0], &t->ev_pre[1] };
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		GPU_CHECK(e, gpuEventCreateWithFlags(ev[i], gpuEventDisableTiming));
	return AORTA_OK;
}

/* The model (and the distributed executor), its parameters, the loss
 * accumulator. */
static enum aorta_status open_model(struct trainer *t, struct aorta_error *e)
{
	const struct train_config *cfg = t->cfg;
	struct gpu_model *gm = &t->gm;
	enum aorta_status st;

	if ((st = gpu_model_create_ex(gm, &t->d, &t->lay, t->B, t->prec, t->gs.s[GS_COMPUTE],
				      t->dist ? GPU_MODEL_NO_STATE : 0u, e)))
		return st;
	t->have_model = 1;
	gm->beta1 = (float)cfg->optimizer.betas[0];
	gm->beta2 = (float)cfg->optimizer.betas[1];
	gm->eps = (float)cfg->optimizer.eps;
	gm->weight_decay = (float)cfg->optimizer.weight_decay;
	gm->grad_unscale = t->prec == PREC_FP16 ? 1.0f / FP16_LOSS_SCALE : 1.0f;
	t->params_host = xmalloc(t->lay.total * sizeof(float));
	params_init(t->params_host, &t->lay, &t->d, t->seed);
	if (t->dist) {
		struct dist_adamw opt = { gm->beta1, gm->beta2, gm->eps, gm->weight_decay,
					  (float)cfg->training.grad_clip_norm };
		if ((st = dist_gpu_init(&t->dx, gm, &t->plan, &t->sched, t->comm, &t->gs,
					t->instrumented ? t->rec : NULL, t->params_host, &opt, gm->grad_unscale, e)))
			return st;
		t->have_dx = 1;
		dist_gpu_set_norm_early(&t->dx, cfg->debug.norm_early);
		if (t->prefetch_next && (st = gpu_model_spare_batch(gm, e)))
			return st;
		if (cfg->training.inject_allreduce_copies &&
		    (st = dist_gpu_set_stress(&t->dx, cfg->training.allreduce_stress_level, e)))
			return st;
	} else if ((st = gpu_model_upload_params(gm, t->params_host, e))) {
		return st;
	}
	return GPU_CALL(e, gpuMalloc((void **)&t->loss_acc, sizeof(float)));
}

/* The metrics file, the log, telemetry and CUPTI. */
static enum aorta_status open_outputs(struct trainer *t, struct aorta_error *e)
{
	const struct train_config *cfg = t->cfg;
	char path[1200];

	if (mkdir_p(cfg->training.output_dir) != 0)
		return aorta_fail(e, AORTA_EINTERNAL, cfg->training.output_dir, 0, -1,
				  "cannot create the output directory: %s", strerror(errno));
	snprintf(t->res.metrics_path, sizeof(t->res.metrics_path), "%s/rank_%02d_metrics.jsonl",
		 cfg->training.output_dir, t->rank);
	t->mf = fopen(t->res.metrics_path, "a"); /* append, as upstream */
	snprintf(path, sizeof(path), "%s/rank%d.log", cfg->training.output_dir, t->rank);
	t->log = fopen(path, "a");
	if (!t->mf || !t->log)
		return aorta_fail(e, AORTA_EINTERNAL, t->mf ? path : t->res.metrics_path, 0, -1,
				  "cannot open for writing: %s", strerror(errno));
	if (t->o.gpu_metrics)
		t->tel = telemetry_open(t->dev.pci_bus_id, t->dev.index);
	if (cfg->profiling.enabled && t->o.shared_process) {
		/* enabling CUPTI synchronises every context of the process, so while
		 * the other ranks' NCCL kernels wait for this one the process
		 * deadlocks (seen on 2 H200s); one process per rank traces fine */
		logline(t->log, t->quiet, "profiling: not available when several ranks are threads of one process; "
					  "run one rank per process (mpirun, or scripts/launch_cuda.sh with USE_MPI=1) "
					  "to record CUPTI traces");
	} else if (cfg->profiling.enabled) { /* every rank, each in its own process: its own trace */
		struct cupti_opts co = { 0 };
		co.output_dir = cfg->training.output_dir;
		co.rank = t->rank;
		co.world_size = t->W;
		co.device = t->dev.index;
		co.gzip = 0;
		co.always_on = cfg->compile.enabled; /* graph kernels need it (cupti.h) */
		co.sched = (struct cupti_schedule){ 0, (int)cfg->profiling.wait, (int)cfg->profiling.warmup,
						    (int)cfg->profiling.active, (int)cfg->profiling.repeat };
		struct aorta_error ce = { 0 };
		if (cupti_open(&t->cup, &co, &ce) != AORTA_OK) {
			logline(t->log, t->quiet, "profiling disabled: %s", ce.msg);
			t->cup = NULL;
		}
	}
	return AORTA_OK;
}

/* The run's opening lines of the log. */
static void log_setup(struct trainer *t)
{
	const struct train_config *cfg = t->cfg;
	FILE *log = t->log;
	const int quiet = t->quiet, dist = t->dist;

	logline(log, quiet, "training on %s: %zu parameters, batch %d x %d micro-batches, %s, %ld steps, "
			    "%d distinct batches",
		t->dev.name, t->lay.total, t->B, t->accum,
		t->prec == PREC_BF16 ? "bf16" : t->prec == PREC_FP16 ? "fp16" : "fp32", t->total, t->data.n);
	if (dist) {
		char sbuf[256];
		dist_schedule_format(&t->sched, sbuf, sizeof(sbuf));
		logline(log, quiet, "rank %d of %d (node size %d): %s%s%s, %zu of %zu parameters local, %d buckets, "
				    "pools %.1f MB gathered + %.1f MB gradients; schedule %s%s",
			t->rank, t->W, t->comm->node_size, t->knobs.mode == DIST_DDP ? "ddp" : "fsdp ",
			t->knobs.mode == DIST_DDP ? "" : sharding_strategy_name(t->knobs.strategy),
			cfg->compile.enabled ? " (compile.enabled: graph mode is world 1 only, running eagerly)" : "",
			t->plan.local_total, t->lay.total, t->plan.nbuckets, (double)t->dx.gather.bytes / 1e6,
			(double)t->dx.gradp.bytes / 1e6, sbuf, strlen(sbuf) + 1 >= sizeof(sbuf) ? "..." : "");
	}
	if (dist && comm_is_nccl(t->comm)) {
		char nb[320];
		const char *why = launch_train_cta_why();
		comm_nccl_describe(t->comm, nb, sizeof(nb));
		logline(log, quiet, "%s%s%s%s%s", nb,
			t->dx.params_win ? "; all-gathers on the copy engines (symmetric windows)" : "",
			why[0] ? " (CTA policy: " : "", why, why[0] ? ")" : "");
	}
	if (dist)
		logline(log, quiet, "cross-step overlap: next step's batch uploaded during the step: %s; next step's "
				    "first all-gather at the end of the step: %s",
			t->prefetch_next ? "on" : "off (debug.prefetch_next=false)",
			!t->pregather ? "off (debug.pregather=false)" :
			t->dx.ag_first >= 0 ? "on" : "none to move (no all-gather)");
	if (dist)
		logline(log, quiet, "gradient norm: %s",
			!t->dx.norm_early ? "summed at the end of the backward (debug.norm_early=false)" :
			t->dx.norm_ranges ? "summed as each reduction lands" :
					    "summed at the end of the backward (the reductions do not tile the shard)");
	if (dist && t->knobs.reduce_dtype == COMM_BF16)
		logline(log, quiet, "fsdp.reduce_dtype bf16: gradient %s in bf16 (%.1f MB scratch), cast back to fp32 "
				    "for the optimizer", t->knobs.mode == DIST_DDP ? "bucket all-reduces" : "reductions",
			(double)(t->dx.rs16_n + t->dx.ar16_n) * 2.0 / 1e6);
	else if (!dist && cfg->fsdp.reduce_dtype == REDUCE_BF16)
		logline(log, quiet, "fsdp.reduce_dtype bf16 ignored: the single-GPU loop reduces nothing");
	if (cfg->training.inject_allreduce_copies)
		logline(log, quiet, dist ? "training.inject_allreduce_copies: %d x (all_reduce avg, copy, all_reduce sum, "
					   "D2H/H2D round trip, all_reduce avg) of %zu floats at the end of every step"
					 : "training.inject_allreduce_copies (level %d, %zu floats) ignored: it applies to the "
					   "distributed executor (world > 1 or debug.distributed_executor)",
			dist ? t->dx.stress_level : cfg->training.allreduce_stress_level, DIST_STRESS_FLOATS);
	/* the executor's measurement switch (dist_gpu.c says what each mode skips) */
	if (cfg->debug.isolate != ISOLATE_NONE) {
		const char *iso = cfg->debug.isolate == ISOLATE_COMM ? "comm" : "compute";
		if (dist)
			logline(log, quiet, "debug.isolate=%s: the step runs %s only, for timing; the model does "
					    "not train and the loss and gradient norm are meaningless", iso,
				cfg->debug.isolate == ISOLATE_COMM ? "the collectives" : "the compute (no collective)");
		else
			logline(log, quiet, "debug.isolate=%s ignored: it applies to the distributed executor "
					    "(world > 1 or debug.distributed_executor)", iso);
	}
}

enum aorta_status trainer_open(struct trainer **out, const struct train_config *cfg, const struct trainer_opts *o,
			       struct comm *comm, int device, struct aorta_error *e)
{
	struct trainer *t = xcalloc(1, sizeof(*t));
	enum aorta_status st;

	*out = NULL;
	t->cfg = cfg;
	t->o = *o;
	t->comm = comm;
	t->W = comm->size;
	t->rank = comm->rank;
	t->dist = t->W > 1 || cfg->debug.distributed_executor;
	t->quiet = o->quiet || t->rank != 0;   /* only rank 0 prints */
	t->instrumented = cfg->debug.instrumented;
	t->prefetch_next = cfg->debug.prefetch_next;
	t->pregather = cfg->debug.pregather;
	t->graph_wanted = cfg->compile.enabled;
	train_config_model_dims(cfg, &t->d);
	if (layout_init(&t->lay, &t->d) != 0) {
		st = aorta_fail(e, AORTA_EINPUT, cfg->source, 0, -1,
				"the model dimensions are invalid (model_dim must divide by num_heads)");
		goto fail;
	}
	t->B = (int)cfg->training.batch_size;
	t->accum = (int)(cfg->training.gradient_accumulation > 0 ? cfg->training.gradient_accumulation : 1);
	t->total = (long)train_config_total_steps(cfg, t->W);
	t->prec = cfg->training.mixed_precision == MP_BF16 ? PREC_BF16 :
		  cfg->training.mixed_precision == MP_FP16 ? PREC_FP16 : PREC_FP32;
	const float loss_scale = (t->prec == PREC_FP16 ? FP16_LOSS_SCALE : 1.0f) / (float)t->accum;
	t->seed = (uint64_t)cfg->dataset.seed;

	if (t->dist) {
		/* the plan and its schedule, checked before anything is allocated */
		dist_knobs_from_config(&t->knobs, cfg);
		if ((st = dist_plan_init(&t->plan, t->W, t->rank, comm->node_size, &t->knobs, &t->lay, e)))
			goto fail;
		t->have_plan = 1;
		if ((st = dist_schedule_build(&t->sched, &t->plan, e)) ||
		    (st = dist_schedule_check(&t->sched, &t->plan, NULL, e)))
			goto fail;
		t->graph_wanted = 0;
	}
	if ((st = open_device(t, device, e)) || (st = open_model(t, e)))
		goto fail;

	/* data: batches of the global batch W*B per epoch; this rank takes its slice */
	long per_epoch = (long)(cfg->dataset.num_samples / ((long long)t->B * t->W));
	int nbatches = o->data_batches > 0 ? o->data_batches : (int)(per_epoch < 32 ? per_epoch : 32);
	if (nbatches < 1)
		nbatches = 1;
	if ((st = data_cache_init(&t->data, &t->d, t->B, nbatches, t->seed, (uint64_t)t->B * (uint64_t)t->W,
				  (uint64_t)t->rank * (uint64_t)t->B, e)) ||
	    (st = open_outputs(t, e)))
		goto fail;

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	log_setup(t);

	t->step_ms = xcalloc((size_t)(t->total > 0 ? t->total : 1), sizeof(*t->step_ms));
	t->wall_ms = xcalloc((size_t)(t->total > 0 ? t->total : 1), sizeof(*t->wall_ms));
	struct recorder *rec = t->instrumented ? t->rec : NULL; /* NULL: no ranges (rbegin) */
	t->ph = (struct phase_ctx){ rec, -1, 1, "" };
	t->gm.phase = on_phase;
	t->gm.phase_ctx = &t->ph;
	if ((st = GPU_CALL(e, gpuMallocHost((void **)&t->h_loss, sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMallocHost((void **)&t->h_sumsq, sizeof(double)))))
		goto fail;
	t->x = (struct step_ctx){ .cfg = cfg, .gm = &t->gm, .gs = &t->gs, .rec = rec, .data = &t->data,
				  .ph = &t->ph, .ev_fork = t->ev_fork, .ev_data = t->ev_data,
				  .ev_consumed = t->ev_consumed, .ev_grads = t->ev_grads, .loss_acc = t->loss_acc,
				  .h_loss = t->h_loss, .h_sumsq = t->h_sumsq, .accum = t->accum,
				  .loss_scale = loss_scale, .seed = t->seed, .per_epoch = per_epoch, .rank = t->rank,
				  .dx = t->have_dx ? &t->dx : NULL, .nsteps = t->total,
				  .prefetch_next = t->have_dx && t->prefetch_next, .pregather = t->pregather,
				  .graph_fail = cfg->debug.graph_fail, .ev_pre = { t->ev_pre[0], t->ev_pre[1] } };
	if (t->have_dx)
		dist_gpu_set_loader(&t->dx, load_micro, &t->x);
	if (t->graph_wanted) {
		t->x.par_bytes = sizeof(struct step_params) + (size_t)t->accum * sizeof(uint64_t);
		t->x.copy_node = xcalloc((size_t)t->accum * GPU_MODEL_BATCH_COPIES, sizeof(*t->x.copy_node));
		if ((st = GPU_CALL(e, gpuMallocHost((void **)&t->x.hpar, t->x.par_bytes))) ||
		    (st = GPU_CALL(e, gpuMalloc((void **)&t->x.dpar, t->x.par_bytes))))
			goto fail;
		memset(t->x.hpar, 0, t->x.par_bytes);
	}
	t->li = cfg->training.log_interval > 0 ? cfg->training.log_interval : 10;
	t->progress = !t->quiet && isatty(2);
	*out = t;
	return AORTA_OK;
fail:
	trainer_close(t);
	return st;
}

int trainer_more(const struct trainer *t)
{
	/* world > 1: every rank stops after the same step (stop_all) */
	return t->next < t->total && !(t->dist ? t->stop_all : stop_requested);
}

/* compile.enabled: step 0 runs eagerly (it loads the kernels and sizes
 * cuBLAS's and the ops' workspaces, which a capture must not allocate),
 * step 1 is captured, every later step is a replay. */
static void maybe_capture(struct trainer *t, long s)
{
	struct aorta_error why;
	size_t nnodes = 0;
	double c0 = now_ms();

	if (!t->graph_wanted || t->x.exec || t->graph_failed || s < 1)
		return;
	if (graph_capture(&t->x, s, &why, &nnodes)) {
		t->graph_failed = 1;
		logline(t->log, t->quiet, "compile.enabled: capturing the step as a CUDA graph failed, "
					  "running eagerly: %s", why.msg);
	} else {
		logline(t->log, t->quiet, "compile.enabled: step captured as a CUDA graph of %zu nodes "
					  "(%d micro-batches), captured and instantiated in %.1f ms; "
					  "replayed from step %ld",
			nnodes, t->accum, now_ms() - c0, s);
	}
}

/* The step's record for the JSONL line, written while the next step runs. */
static void record_step(struct trainer *t, long s, const struct rec_step *rs, float loss, double norm, double lr)
{
	struct step_record *sr = &t->pend.sr;
	int epoch, estep;

	step_position(&t->x, s, &epoch, &estep);
	memset(sr, 0, sizeof(*sr));
	sr->rank = t->rank;
	sr->world_size = t->W;
	sr->epoch = epoch;
	sr->step = estep;
	sr->global_step = s;
	sr->loss = loss;
	sr->grad_norm = norm;
	sr->lr = lr;
	if (t->tel) {
		struct gpu_telemetry g;
		telemetry_read(t->tel, &g);
		t->pend.ts = (struct telemetry_sample){ g.available, g.sm_clock_mhz, g.mem_clock_mhz, g.power_w,
							g.temp_c, g.gpu_util_pct, g.mem_util_pct };
		sr->telemetry = &t->pend.ts;
	}
	pending_take(&t->pend, rs, t->dist ? &t->dx : NULL);
}

/* debug.host_delay_ms: the planted host delay before step s's forward (the
 * what-if's validation pairs), on its rank and, with a period, in every
 * second block of steps; a spin, not a sleep, so it lasts what it says
 * whatever the scheduler does. */
static void plant_host_delay(const struct trainer *t, long s)
{
	const struct train_config *c = t->cfg;
	long per = (long)c->debug.host_delay_period;
	if (!(c->debug.host_delay_ms > 0) || (c->debug.host_delay_rank >= 0 && c->debug.host_delay_rank != t->rank) ||
	    (per > 0 && (s / per) % 2 == 0))
		return;
	double until = now_ms() + c->debug.host_delay_ms;
	while (now_ms() < until)
		;
}

enum aorta_status trainer_step(struct trainer *t, struct aorta_error *e)
{
	const long s = t->next;
	struct step_ctx *x = &t->x;
	enum aorta_status st;
	double t0 = now_ms();

	nvtx_push_step(s);
	plant_host_delay(t, s);
	maybe_capture(t, s);
	enum step_mode mode = x->exec ? STEP_REPLAY : STEP_EAGER;
	if (mode == STEP_REPLAY) {
		/* the graph first, then the recorder's bookkeeping while it runs */
		if ((st = graph_prepare(x, s, e)) || (st = GPU_CALL(e, gpuGraphLaunch(x->exec, t->gs.s[GS_COMPUTE]))))
			return st;
	}
	if ((st = t->dist ? enqueue_dist_step(x, s, e) : enqueue_step(x, s, mode, e)))
		return st;
	double lr = lr_of(x, s);
	/* the previous step's line, while the GPU works on this one */
	if (t->pend.valid && (st = emit(&t->pend, t->mf, t->log, t->quiet, t->li, t->total, t->res.metrics_path, e)))
		return st;
	struct rec_step rs;
	if ((st = finish_step(x, s, mode, &rs, e)))
		return st;
	nvtx_pop();
	t->gm.stream = t->gs.s[GS_COMPUTE];
	gpu_ops_set_stream(t->gm.ops, t->gs.s[GS_COMPUTE]);

	float loss = 0.0f;
	double norm = 0.0;
	if (t->dist) {
		if ((st = dist_gpu_step_done(&t->dx, &loss, &norm, &t->stop_all, e)))
			return st;
	} else {
		loss = *t->h_loss / (float)t->accum;
		norm = *t->h_sumsq > 0 ? sqrt(*t->h_sumsq) * t->gm.grad_unscale : 0.0;
	}
	if (!isfinite(loss))
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "the loss is %f at step %ld: training diverged", loss, s);
	if (t->instrumented)
		record_step(t, s, &rs, loss, norm, lr);
	t->wall_ms[t->done] = now_ms() - t0;
	t->step_ms[t->done] = t->instrumented ? (double)rs.total_ns / 1e6 : t->wall_ms[t->done];
	t->done++;
	t->next++;
	if (s == 0)
		t->res.first_loss = loss;
	t->res.last_loss = loss;
	if (t->cup) {
		struct aorta_error ce = { 0 };
		if (cupti_step(t->cup, &ce) != AORTA_OK)
			logline(t->log, t->quiet, "profiling: %s", ce.msg);
	}
	if (t->progress && (t->done % 10 == 0 || t->done == t->total)) {
		/* our own carriage return, written past stderr's escaper (base/termsafe.h) */
		char b[160];
		int n = snprintf(b, sizeof(b), "\r[%ld/%ld steps] %.3f ms/step  loss %.5f ", t->done, t->total,
				 t->step_ms[t->done - 1], loss);
		fflush(stderr);
		if (n > 0 && write(2, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1) < 0)
			t->progress = 0;
	}
	return AORTA_OK;
}

enum aorta_status trainer_finish(struct trainer *t, struct trainer_result *res, struct aorta_error *e)
{
	enum aorta_status st;

	if (t->progress)
		fputc('\n', stderr);
	if (t->pend.valid && (st = emit(&t->pend, t->mf, t->log, t->quiet, t->li, t->total, t->res.metrics_path, e)))
		return st;
	if (t->dist ? t->stop_all : stop_requested)
		logline(t->log, t->quiet, "stopped by a signal after %ld steps; metrics are complete up to there",
			t->done);
	t->res.steps = t->done;
	if (t->done) {
		double sum = 0;
		for (long i = 0; i < t->done; i++)
			sum += t->step_ms[i];
		t->res.mean_step_ms = sum / (double)t->done;
		qsort(t->step_ms, (size_t)t->done, sizeof(*t->step_ms), cmp_double);
		t->res.median_step_ms = t->step_ms[t->done / 2];
		qsort(t->wall_ms, (size_t)t->done, sizeof(*t->wall_ms), cmp_double);
		t->res.median_wall_ms = t->wall_ms[t->done / 2];
	}
	*res = t->res;
	return AORTA_OK;
}

enum aorta_status trainer_run(const struct train_config *cfg, const struct trainer_opts *o,
			      struct trainer_result *res, struct aorta_error *e)
{
	struct comm *c = NULL;
	enum aorta_status st = comm_local_create(&c, e);
	if (st)
		return st;
	st = trainer_rank_run(cfg, o, c, o->device, res, e);
	comm_destroy(c);
	return st;
}

enum aorta_status trainer_rank_run(const struct train_config *cfg, const struct trainer_opts *o, struct comm *comm,
				   int device, struct trainer_result *res, struct aorta_error *e)
{
	struct trainer *t = NULL;
	enum aorta_status st;

	memset(res, 0, sizeof(*res));
	if ((st = trainer_open(&t, cfg, o, comm, device, e)))
		return st;
	while (st == AORTA_OK && trainer_more(t))
		st = trainer_step(t, e);
	if (st == AORTA_OK)
		st = trainer_finish(t, res, e);
	else
		snprintf(res->metrics_path, sizeof(res->metrics_path), "%s", t->res.metrics_path);
	trainer_close(t);
	return st;
}
