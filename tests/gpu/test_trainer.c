/*
 * test_trainer.c - the trainer in parts (trainer_open / trainer_step /
 * trainer_finish / trainer_close, src/train/trainer.h) on one GPU:
 *   - the parts run in order give the same steps and losses as
 *     trainer_rank_run;
 *   - trainer_close releases every host allocation of the run whenever it
 *     is called: after open, mid-run, after finish.  The run is sized with
 *     2,000,000 steps so its per-step arrays (step and wall times, 16 MB
 *     each) dominate; the host heap in use (mallinfo2: arena + mmap'd
 *     chunks) is compared before open and after close, after one warm-up
 *     run has let the CUDA libraries make their process-wide allocations.
 *     A leak of one such array (as wall_ms leaked on every error path of
 *     the old trainer_rank_run) shows as 16 MB.  One run diverges on
 *     purpose (learning rate 1e30) so that trainer_step fails: that error
 *     path is measured too.
 *   - debug.* config keys reach the loop (debug.instrumented=false: no
 *     JSONL line is written).
 * Skips without a device.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm/comm.h"
#include "gpu/gpu.h"
#include "testing.h"
#include "train/train_config.h"
#include "train/trainer.h"

static char root[] = "/tmp/aorta_test_trainer_XXXXXX";
static int ndev;

static void small_config(struct train_config *c, const char *sub, long long steps)
{
	train_config_defaults(c);
	c->training.batch_size = 4;
	c->training.gradient_accumulation = 1;
	c->training.max_steps = steps;
	c->training.log_interval = 1000;
	snprintf(c->training.output_dir, sizeof(c->training.output_dir), "%.200s/%.50s", root, sub);
	c->dataset.num_samples = 4096;
	c->dataset.sequence_length = 16;
	c->dataset.sparse_features = 4;
	c->dataset.vocab_size = c->model.vocab_size = 2000;
	c->dataset.num_dense_features = c->model.num_dense_features = 4;
	c->dataset.dense_dim = c->model.dense_dim = 8;
	c->model.embedding_dim = 32;
	c->model.model_dim = 128;
	c->model.num_heads = 4;
	c->model.num_layers = 2;
	c->model.mlp_hidden_dim = 256;
	c->profiling.enabled = 0;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

static long jsonl_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int ch;
	if (!f)
		return -1;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* open, n steps (or until the run ends), close; finish when asked */
static enum aorta_status run_parts(const struct train_config *c, int nsteps, int finish, struct trainer_result *res,
				   struct aorta_error *e)
{
	struct trainer_opts o = { 0, -1, 1, 0, 0 };
	struct comm *comm = NULL;
	struct trainer *t = NULL;
	enum aorta_status st;

	memset(res, 0, sizeof(*res));
	if ((st = comm_local_create(&comm, e)))
		return st;
	st = trainer_open(&t, c, &o, comm, -1, e);
	for (int i = 0; st == AORTA_OK && i < nsteps && trainer_more(t); i++)
		st = trainer_step(t, e);
	if (st == AORTA_OK && finish)
		st = trainer_finish(t, res, e);
	trainer_close(t);
	comm_destroy(comm);
	return st;
}

static void test_parts_equal_rank_run(void)
{
	struct train_config c;
	struct trainer_result a, b;
	struct aorta_error e;
	struct trainer_opts o = { 0, -1, 1, 0, 0 };

	if (!ndev)
		SKIP("no GPU");
	small_config(&c, "whole", 6);
	CHECK_EQ_I(trainer_run(&c, &o, &a, &e), AORTA_OK);
	small_config(&c, "parts", 6);
	CHECK_EQ_I(run_parts(&c, 100, 1, &b, &e), AORTA_OK);
	CHECK_EQ_I(a.steps, 6);
	CHECK_EQ_I(b.steps, 6);
	CHECK(a.first_loss == b.first_loss);
	CHECK(a.last_loss == b.last_loss);
	CHECK(b.median_step_ms > 0);
	CHECK_EQ_I(jsonl_lines(b.metrics_path), 6);
	train_config_release(&c);
}

static void test_close_releases_everything_at_any_point(void)
{
	struct train_config c;
	struct trainer_result r;
	struct aorta_error e;

	if (!ndev)
		SKIP("no GPU");
	small_config(&c, "leak", 2000000);
	/* warm-up: the runtime's, cuBLAS's and the recorder's process-wide state */
	CHECK_EQ_I(run_parts(&c, 3, 0, &r, &e), AORTA_OK);
	const int at[] = { 0, 1, 3 };   /* steps run before close: after open, mid-run */
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		size_t before = heap_in_use();
		CHECK_EQ_I(run_parts(&c, at[i], 0, &r, &e), AORTA_OK);
		size_t after = heap_in_use();
		long long grew = (long long)after - (long long)before;
		if (grew >= 4 << 20)
			fprintf(stderr, "  close after %d steps: the heap grew by %lld bytes\n", at[i], grew);
		CHECK(grew < 4 << 20);
	}
	/* an error path: a learning rate of 1e30 makes the loss non-finite
	 * within a few steps, and trainer_step fails ("training diverged"), the
	 * path on which wall_ms leaked; should it not fail, close mid-run is
	 * checked again */
	c.optimizer.lr = 1e30;
	c.scheduler.warmup_steps = 0;
	size_t before_div = heap_in_use();
	enum aorta_status st = run_parts(&c, 20, 0, &r, &e);
	long long grew_div = (long long)heap_in_use() - (long long)before_div;
	printf("  diverging run: %s; the heap grew by %lld bytes\n", st ? e.msg : "did not fail in 20 steps", grew_div);
	CHECK(grew_div < 4 << 20);
	c.optimizer.lr = 1e-4;
	/* and after finish, on a run that ends by itself */
	small_config(&c, "leak_end", 4);
	CHECK_EQ_I(run_parts(&c, 100, 1, &r, &e), AORTA_OK);
	size_t before = heap_in_use();
	CHECK_EQ_I(run_parts(&c, 100, 1, &r, &e), AORTA_OK);
	CHECK((long long)heap_in_use() - (long long)before < 4 << 20);
	train_config_release(&c);
}

static void test_debug_uninstrumented_writes_no_metrics(void)
{
	struct train_config c;
	struct trainer_result r;
	struct aorta_error e;

	if (!ndev)
		SKIP("no GPU");
	small_config(&c, "unins", 4);
	c.debug.instrumented = 0;
	CHECK_EQ_I(run_parts(&c, 100, 1, &r, &e), AORTA_OK);
	CHECK_EQ_I(r.steps, 4);
	CHECK(r.median_step_ms > 0);               /* host clock */
	CHECK(r.median_step_ms == r.median_wall_ms);
	CHECK_EQ_I(jsonl_lines(r.metrics_path), 0);
	train_config_release(&c);
}

int main(void)
{
	struct aorta_error e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gpu_device_count(&ndev, &e) != AORTA_OK)
		ndev = 0;
	if (!ndev)
		printf("no GPU visible: every test below is skipped\n");
	if (ndev && !mkdtemp(root)) {
		fprintf(stderr, "mkdtemp failed\n");
		return 1;
	}
	TEST(test_parts_equal_rank_run);
	TEST(test_close_releases_everything_at_any_point);
	TEST(test_debug_uninstrumented_writes_no_metrics);
	if (ndev) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "  note: could not remove %s\n", root);
	}
	return test_report();
}
