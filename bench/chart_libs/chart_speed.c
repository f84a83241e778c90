/*
 * chart_speed.c - times a plot plug-in (report_plot.h) on the chart kinds
 * `aorta report` draws, at the sizes of a large run: a timeline of 900
 * points x (8 rank lines + 2 bands + 2 means), bars of 64 ranks x 2
 * datasets, a 64-rank x 8-figure heatmap, a Gantt chart of 2,000 ranges.
 * Each chart is drawn to PNG and SVG, REPS times, serially and then from
 * THREADS threads at once (each thread its own files); prints ms per chart.
 *   chart_speed PLUGIN.so OUTDIR [REPS] [THREADS]
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report_plot.h"

static plot_render_fn render;
static const char *outdir;
static int reps;

#define NPTS 900
#define NR 64
static double xs[NPTS], ys[12][NPTS], y2s[2][NPTS], rx[NR], ry[2][NR], cells[NR * 8];
static struct plot_rect rects[2000];
static const char *cats[NR], *rows[NR], *figs[8] = { "step", "compute", "overlap", "comm", "exposed", "aux", "idle", "ratio" };
static char catbuf[NR][16], rowbuf[NR][16];
static struct plot_series tl[12], bars[2];
static struct plot_panel panels[4];
static struct plot_chart charts[4];
static const char *names[4] = { "timeline", "bars", "heatmap", "gantt" };

static void build(void)
{
	for (int i = 0; i < NPTS; i++) {
		xs[i] = i;
		for (int s = 0; s < 12; s++)
			ys[s][i] = 20 + 5 * sin(i * 0.01 * (s + 1)) + s;
		y2s[0][i] = ys[0][i] + 3, y2s[1][i] = ys[1][i] + 3;
	}
	for (int s = 0; s < 8; s++)
		tl[s] = (struct plot_series){ s ? NULL : "each rank", s % 2 ? OI_ORANGE : OI_BLUE, xs, ys[s], NULL, NULL, NPTS, 1, 0.45, 0 };
	tl[8] = (struct plot_series){ "range", OI_BLUE, xs, ys[8], y2s[0], NULL, NPTS, 0, 0.25, 0 };
	tl[9] = (struct plot_series){ "range", OI_ORANGE, xs, ys[9], y2s[1], NULL, NPTS, 0, 0.25, 0 };
	tl[10] = (struct plot_series){ "mean compute", OI_BLUE, xs, ys[10], NULL, NULL, NPTS, 2.5, 0, 0 };
	tl[11] = (struct plot_series){ "mean overlap", OI_ORANGE, xs, ys[11], NULL, NULL, NPTS, 2.5, 0, 0 };
	panels[0] = (struct plot_panel){ .kind = PK_LINE, .xlabel = "global step", .ylabel = "time per step (ms)",
					 .y_from_zero = 1, .x_integer = 1, .series = tl, .nseries = 12 };
	for (int i = 0; i < NR; i++) {
		snprintf(catbuf[i], 16, "%d", i);
		snprintf(rowbuf[i], 16, "rank %d", i);
		cats[i] = catbuf[i], rows[i] = rowbuf[i];
		rx[i] = i, ry[0][i] = 40 + i % 7, ry[1][i] = 90 + i % 5;
		for (int k = 0; k < 8; k++)
			cells[i * 8 + k] = (double)((i * 37 + k * 11) % 200) - 100;
	}
	bars[0] = (struct plot_series){ "ddp", OI_BLUE, rx, ry[0], NULL, NULL, NR, 0, 0, 0 };
	bars[1] = (struct plot_series){ "fsdp2", OI_ORANGE, rx, ry[1], NULL, NULL, NR, 0, 0, 0 };
	panels[1] = (struct plot_panel){ .kind = PK_BARS, .xlabel = "rank", .ylabel = "time per step (ms)",
					 .y_from_zero = 1, .series = bars, .nseries = 2, .cats = cats, .ncats = NR };
	panels[2] = (struct plot_panel){ .kind = PK_HEATMAP, .xlabel = "figure (change, %)", .cats = figs, .ncats = 8,
					 .rows = rows, .nrows = NR, .cells = cells, .cell_unit = "%" };
	static const char *grows[6] = { "overlap", "compute", "all-gather", "reduce-scatter", "all-reduce", "aux" };
	for (int i = 0; i < 2000; i++)
		rects[i] = (struct plot_rect){ i * 0.05, i * 0.05 + 0.04, 1 + i % 5, (i % 2 ? OI_ORANGE : OI_BLUE), 0, 0 };
	panels[3] = (struct plot_panel){ .kind = PK_GANTT, .xlabel = "time since step start (ms)", .cats = grows,
					 .ncats = 6, .rects = rects, .nrects = 2000 };
	for (int c = 0; c < 4; c++)
		charts[c] = (struct plot_chart){ names[c], 1100, c == 2 ? 1800 : 520, 1, &panels[c], 1, NULL };
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *work(void *arg)
{
	long id = (long)arg;
	char png[1024], svg[1024], err[256];
	for (int r = 0; r < reps; r++)
		for (int c = 0; c < 4; c++) {
			snprintf(png, sizeof(png), "%s/%s_t%ld.png", outdir, names[c], id);
			snprintf(svg, sizeof(svg), "%s/%s_t%ld.svg", outdir, names[c], id);
			if (render(&charts[c], png, svg, err, sizeof(err)) != 0) {
				fprintf(stderr, "%s: %s\n", names[c], err);
				exit(1);
			}
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: chart_speed PLUGIN.so OUTDIR [REPS] [THREADS]\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	plot_abi_fn abi;
	*(void **)&abi = dlsym(h, "aorta_plot_abi");
	*(void **)&render = dlsym(h, "aorta_plot_render");
	if (!abi || !render || abi() != PLOT_ABI) {
		fprintf(stderr, "%s: not a plot plug-in of ABI %d (rebuild this program and the plug-in)\n", argv[1], PLOT_ABI);
		return 1;
	}
	outdir = argv[2];
	reps = argc > 3 ? atoi(argv[3]) : 5;
	int nt = argc > 4 ? atoi(argv[4]) : 2;
	build();
	char png[1024], svg[1024], err[256];
	/* warm-up: fonts and caches */
	snprintf(png, sizeof(png), "%s/warm.png", outdir);
	render(&charts[0], png, NULL, err, sizeof(err));
	for (int c = 0; c < 4; c++) {
		snprintf(png, sizeof(png), "%s/%s.png", outdir, names[c]);
		snprintf(svg, sizeof(svg), "%s/%s.svg", outdir, names[c]);
		double t0 = now();
		for (int r = 0; r < reps; r++)
			render(&charts[c], png, svg, err, sizeof(err));
		printf("%-9s PNG+SVG %7.1f ms per chart (mean of %d)\n", names[c], (now() - t0) / reps * 1e3, reps);
	}
	double t0 = now();
	work((void *)0L);
	double serial = now() - t0;
	pthread_t th[64];
	t0 = now();
	for (long i = 0; i < nt && i < 64; i++)
		pthread_create(&th[i], NULL, work, (void *)(i + 1));
	for (long i = 0; i < nt && i < 64; i++)
		pthread_join(th[i], NULL);
	double par = now() - t0;
	printf("4 charts x %d reps: serial %.3f s; %d threads each drawing as much: %.3f s (%.2fx the work per second)\n",
	       reps, serial, nt, par, serial * nt / par);
	return 0;
}
