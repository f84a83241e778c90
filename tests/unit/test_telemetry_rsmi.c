/*
 * test_telemetry_rsmi.c - telemetry.c's ROCm SMI half, on the CPU.
 *
 * Built from src/gpu/telemetry.c with -DAORTA_HIP (which selects ROCm SMI
 * there and needs no HIP runtime) against the installed rocm_smi.h, and
 * linked with the host objects, so `make test` runs it on any machine.
 *   - library absent: unavailable, the reason names what failed to load;
 *   - the real librocm_smi64 (Debian's librocm-smi64-1, installed by
 *     scripts/deps.sh): on a machine without an AMD GPU driver rsmi_init
 *     fails, or finds no device: unavailable with that reason, no crash;
 *     on an AMD machine the readings must be plausible;
 *   - the test double build/tests/librsmi_double.so (tests/unit/
 *     rsmi_double.c): known readings, so the conversions (Hz, uW,
 *     millidegrees), device matching by PCI bus id, the fallbacks (socket
 *     power, junction temperature), both rsmi_frequencies_t layouts (ROCm 5
 *     and 6), balanced init/shut_down and the JSON are checked exactly.
 * The double is looked for beside the test program (argv[0]'s folder), or
 * at the path given as the first argument.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "gpu/telemetry.h"
#include "testing.h"

static char double_path[4096] = "librsmi_double.so";

struct rsmi_double_state {
	int inits, shutdowns;
};

/* the double's counters: a handle of our own keeps it loaded across opens */
static struct rsmi_double_state *double_state(void **h)
{
	*h = dlopen(double_path, RTLD_NOW | RTLD_LOCAL);
	if (!*h)
		return NULL;
	void *p = dlsym(*h, "rsmi_double_state");
	struct rsmi_double_state *(*fn)(void);
	memcpy(&fn, &p, sizeof(p));
	return fn ? fn() : NULL;
}

static struct gpu_telemetry read_once(const char *bus, int index)
{
	struct gpu_telemetry g;
	struct telemetry *t = telemetry_open(bus, index);

	telemetry_read(t, &g);
	telemetry_close(t);
	return g;
}

static char *json_of(const struct gpu_telemetry *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;

	jw_init(&w, f, 0);
	jw_obj(&w, NULL);
	telemetry_write_json(g, &w);
	jw_obj_end(&w);
	fclose(f);
	return buf;
}

static void test_library_absent(void)
{
	setenv("AORTA_ROCM_SMI_LIB", "/nonexistent/librocm_smi64.so.5", 1);
	struct gpu_telemetry g = read_once("0000:03:00.0", 0);
	CHECK_EQ_I(g.available, 0);
	CHECK(strstr(g.why, "AORTA_ROCM_SMI_LIB=/nonexistent/librocm_smi64.so.5 not loadable") == g.why);
	CHECK(strstr(g.why, "No such file") != NULL);
	CHECK_EQ_I(g.sm_clock_mhz, -1);
	CHECK(isnan(g.power_w));
	char *j = json_of(&g);
	CHECK(strstr(j, "\"telemetry\":{\"available\":false,\"why\":\"AORTA_ROCM_SMI_LIB=") != NULL);
	free(j);
	/* close and read tolerate what open returned, and NULL */
	telemetry_close(NULL);
	telemetry_read(NULL, &g);
	CHECK_EQ_I(g.available, 0);
	CHECK_STR(g.why, "no telemetry object");
	unsetenv("AORTA_ROCM_SMI_LIB");
}

/* The library ROCm or Debian installs, found the way aorta finds it. */
static void test_real_library(void)
{
	void *h = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
	unsetenv("AORTA_ROCM_SMI_LIB");
	struct gpu_telemetry g = read_once(NULL, 0);
	if (!h) {
		/* not installed: the search fails with the list it tried */
		CHECK_EQ_I(g.available, 0);
		CHECK(strstr(g.why, "ROCm SMI not loadable") == g.why);
		printf("  librocm_smi64 not installed: %s\n", g.why);
		SKIP("librocm_smi64 is not installed (scripts/deps.sh installs librocm-smi-dev)");
	}
	dlclose(h);
	printf("  real librocm_smi64: %s\n", g.available ? "available" : g.why);
	if (!g.available) {
		/* no AMD GPU here: init fails, or it succeeds and finds no device */
		CHECK(strncmp(g.why, "rsmi_init: ", 11) == 0 ||
		      strcmp(g.why, "rsmi_num_monitor_devices: no AMD GPU") == 0);
		return;
	}
	/* an AMD GPU: plausible readings (null where the part has no sensor) */
	CHECK(g.sm_clock_mhz == -1 || (g.sm_clock_mhz > 0 && g.sm_clock_mhz < 10000));
	CHECK(isnan(g.power_w) || (g.power_w >= 0 && g.power_w < 2000));
	CHECK(g.gpu_util_pct >= -1 && g.gpu_util_pct <= 100);
	CHECK(g.mem_total_bytes == -1 || g.mem_used_bytes <= g.mem_total_bytes);
}

static void check_device0(const struct gpu_telemetry *g)
{
	CHECK_EQ_I(g->available, 1);
	CHECK_STR(g->why, "");
	CHECK_EQ_I(g->sm_clock_mhz, 1700);
	CHECK_EQ_I(g->mem_clock_mhz, 1600);
	CHECK_NEAR(g->power_w, 215.5, 1e-9);
	CHECK_EQ_I(g->temp_c, 45);
	CHECK_EQ_I(g->gpu_util_pct, 87);
	CHECK_EQ_I(g->mem_util_pct, 33);
	CHECK_EQ_I(g->mem_used_bytes, 12ll << 30);
	CHECK_EQ_I(g->mem_total_bytes, 64ll << 30);
}

static void test_double_readings(void)
{
	void *h;
	struct rsmi_double_state *s = double_state(&h);
	if (!s)
		SKIP("test double not built (make builds build/tests/librsmi_double.so)");
	setenv("AORTA_ROCM_SMI_LIB", double_path, 1);
	unsetenv("RSMI_DOUBLE_MAJOR");
	unsetenv("RSMI_DOUBLE_INIT_FAIL");
	int i0 = s->inits, s0 = s->shutdowns;

	/* by PCI bus id; then by index when there is none */
	struct gpu_telemetry g = read_once("0000:03:00.0", 1);
	check_device0(&g);
	g = read_once(NULL, 0);
	check_device0(&g);
	/* device 1, whose id also carries a partition number (ignored) */
	g = read_once("0000:83:00.0", 0);
	CHECK_EQ_I(g.available, 1);
	CHECK_NEAR(g.power_w, 300.0, 1e-9); /* average unsupported: socket power */
	CHECK_EQ_I(g.temp_c, 61);            /* no edge sensor: junction */
	CHECK_EQ_I(g.gpu_util_pct, -1);      /* 101 % is no reading */
	CHECK_EQ_I(g.sm_clock_mhz, 1700);

	/* the JSON: same keys and format as NVML's */
	g = read_once(NULL, 0);
	char *j = json_of(&g);
	CHECK_STR(j, "{\"telemetry\":{\"available\":true,\"sm_clock_mhz\":1700,\"mem_clock_mhz\":1600,"
		     "\"power_w\":215.500,\"temp_c\":45,\"gpu_util_pct\":87,\"mem_util_pct\":33,"
		     "\"mem_used_bytes\":12884901888,\"mem_total_bytes\":68719476736}}");
	free(j);
	/* every successful init was shut down once */
	CHECK_EQ_I(s->inits - i0, 4);
	CHECK_EQ_I(s->shutdowns - s0, 4);
	unsetenv("AORTA_ROCM_SMI_LIB");
	dlclose(h);
}

static void test_double_rocm6_layout(void)
{
	void *h;
	struct rsmi_double_state *s = double_state(&h);
	if (!s)
		SKIP("test double not built");
	setenv("AORTA_ROCM_SMI_LIB", double_path, 1);
	setenv("RSMI_DOUBLE_MAJOR", "6", 1);
	struct gpu_telemetry g = read_once("0000:03:00.0", 0);
	check_device0(&g);
	unsetenv("RSMI_DOUBLE_MAJOR");
	unsetenv("AORTA_ROCM_SMI_LIB");
	dlclose(h);
}

static void test_double_init_fails(void)
{
	void *h;
	struct rsmi_double_state *s = double_state(&h);
	if (!s)
		SKIP("test double not built");
	setenv("AORTA_ROCM_SMI_LIB", double_path, 1);
	setenv("RSMI_DOUBLE_INIT_FAIL", "1", 1);
	int s0 = s->shutdowns;
	struct gpu_telemetry g = read_once("0000:03:00.0", 0);
	CHECK_EQ_I(g.available, 0);
	CHECK_STR(g.why, "rsmi_init: RSMI_STATUS_INIT_ERROR: double init failure (no AMD GPU driver?)");
	CHECK_EQ_I(s->shutdowns, s0); /* nothing to shut down */
	unsetenv("RSMI_DOUBLE_INIT_FAIL");
	unsetenv("AORTA_ROCM_SMI_LIB");
	dlclose(h);
}

static void test_double_no_such_device(void)
{
	void *h;
	struct rsmi_double_state *s = double_state(&h);
	if (!s)
		SKIP("test double not built");
	setenv("AORTA_ROCM_SMI_LIB", double_path, 1);
	int i0 = s->inits, s0 = s->shutdowns;
	/* a bus id it does not list and an index past its two devices */
	struct gpu_telemetry g = read_once("0000:99:00.0", 5);
	CHECK_EQ_I(g.available, 0);
	CHECK_STR(g.why, "rocm smi device 0000:99:00.0: not among its 2 devices");
	/* the bus id it lists wins over the index */
	g = read_once("0000:03:00.0", 5);
	CHECK_EQ_I(g.available, 1);
	/* a malformed bus id falls back to the index */
	g = read_once("03:00", 0);
	check_device0(&g);
	CHECK_EQ_I(s->inits - i0, 3);
	CHECK_EQ_I(s->shutdowns - s0, 3);
	unsetenv("AORTA_ROCM_SMI_LIB");
	dlclose(h);
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');
	if (argc > 1)
		snprintf(double_path, sizeof(double_path), "%s", argv[1]);
	else if (slash)
		snprintf(double_path, sizeof(double_path), "%.*s/librsmi_double.so", (int)(slash - argv[0]), argv[0]);
	TEST(test_library_absent);
	TEST(test_real_library);
	TEST(test_double_readings);
	TEST(test_double_rocm6_layout);
	TEST(test_double_init_fails);
	TEST(test_double_no_such_device);
	return test_report();
}
