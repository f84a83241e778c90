/*
 * rsmi_double.c - a test double of librocm_smi64 for test_telemetry_rsmi.c,
 * built as build/tests/librsmi_double.so and loaded through
 * AORTA_ROCM_SMI_LIB.  It defines the entry points telemetry.c uses with the
 * signatures of the installed <rocm_smi/rocm_smi.h> (the compiler checks
 * them against its declarations) and returns fixed, known readings, so the
 * test can check telemetry.c's unit conversions, device matching and
 * fallbacks; the real library is tested for what it does on a machine
 * without an AMD GPU (rsmi_init fails), see the test.
 *
 * Two devices:
 *   0  0000:03:00.0  sclk 500/1000/1700 MHz, current 1700; mclk 1600;
 *                    average power 215.5 W; edge 45.0 C; busy 87 %,
 *                    memory busy 33 %; VRAM 12 GiB used of 64 GiB
 *   1  0000:83:00.0  as device 0 except: average power not supported,
 *                    socket power 300 W (ROCm 6's, MI300-like); no edge
 *                    sensor, junction 61.5 C; busy 101 % (invalid)
 * Environment: RSMI_DOUBLE_INIT_FAIL=1 makes rsmi_init fail;
 * RSMI_DOUBLE_MAJOR=N sets the version, and N >= 6 writes
 * rsmi_frequencies_t in ROCm 6's layout (bool has_deep_sleep first, 33
 * frequencies).  rsmi_double_state() returns the init/shut_down counts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rocm_smi/rocm_smi.h>

struct rsmi_double_state {
	int inits, shutdowns;
};
static struct rsmi_double_state st;

struct rsmi_double_state *rsmi_double_state(void);
struct rsmi_double_state *rsmi_double_state(void)
{
	return &st;
}

static int major(void)
{
	const char *m = getenv("RSMI_DOUBLE_MAJOR");
	return m && *m ? atoi(m) : 5;
}

rsmi_status_t rsmi_init(uint64_t init_flags)
{
	(void)init_flags;
	const char *f = getenv("RSMI_DOUBLE_INIT_FAIL");
	if (f && *f == '1')
		return RSMI_STATUS_INIT_ERROR;
	st.inits++;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void)
{
	st.shutdowns++;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string)
{
	switch (status) {
	case RSMI_STATUS_INIT_ERROR: *status_string = "RSMI_STATUS_INIT_ERROR: double init failure"; break;
	case RSMI_STATUS_NOT_SUPPORTED: *status_string = "RSMI_STATUS_NOT_SUPPORTED"; break;
	default: *status_string = "RSMI_STATUS_OTHER"; break;
	}
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_version_get(rsmi_version_t *version)
{
	version->major = (uint32_t)major();
	version->minor = 0;
	version->patch = 0;
	version->build = "double";
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices)
{
	*num_devices = 2;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid)
{
	if (dv_ind > 1)
		return RSMI_STATUS_INVALID_ARGS;
	/* domain 0, bus 0x03 / 0x83, device 0, function 0; device 1 also
	 * carries a partition id in bits 31..28, as ROCm 6 reports it */
	*bdfid = dv_ind == 0 ? (0x03u << 8) : ((uint64_t)1 << 28) | (0x83u << 8);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t dv_ind, rsmi_clk_type_t clk_type, rsmi_frequencies_t *f)
{
	static const uint64_t sys[3] = { 500000000u, 1000000000u, 1700000000u }, mem[1] = { 1600000000u };
	const uint64_t *v = clk_type == RSMI_CLK_TYPE_SYS ? sys : mem;
	uint32_t n = clk_type == RSMI_CLK_TYPE_SYS ? 3 : 1, cur = n - 1;

	if (dv_ind > 1 || (clk_type != RSMI_CLK_TYPE_SYS && clk_type != RSMI_CLK_TYPE_MEM))
		return RSMI_STATUS_NOT_SUPPORTED;
	if (major() >= 6) { /* ROCm 6: bool has_deep_sleep; u32 num, current; u64 frequency[33] */
		unsigned char *p = (unsigned char *)f;
		memset(p, 0, 280);
		p[0] = 1;
		memcpy(p + 4, &n, 4);
		memcpy(p + 8, &cur, 4);
		memcpy(p + 16, v, n * sizeof(uint64_t));
	} else {
		memset(f, 0, sizeof(*f));
		f->num_supported = n;
		f->current = cur;
		memcpy(f->frequency, v, n * sizeof(uint64_t));
	}
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *power)
{
	if (dv_ind != 0 || sensor_ind != 0)
		return RSMI_STATUS_NOT_SUPPORTED;
	*power = 215500000u; /* uW */
	return RSMI_STATUS_SUCCESS;
}

/* ROCm 6's (not in the 5.2 header): declared here for -Wmissing-prototypes */
rsmi_status_t rsmi_dev_current_socket_power_get(uint32_t dv_ind, uint64_t *socket_power);
rsmi_status_t rsmi_dev_current_socket_power_get(uint32_t dv_ind, uint64_t *socket_power)
{
	if (dv_ind != 1)
		return RSMI_STATUS_NOT_SUPPORTED;
	*socket_power = 300000000u;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type, rsmi_temperature_metric_t metric,
				       int64_t *temperature)
{
	if (metric != RSMI_TEMP_CURRENT || dv_ind > 1)
		return RSMI_STATUS_NOT_SUPPORTED;
	if (sensor_type == RSMI_TEMP_TYPE_EDGE && dv_ind == 0) {
		*temperature = 45000;
		return RSMI_STATUS_SUCCESS;
	}
	if (sensor_type == RSMI_TEMP_TYPE_JUNCTION && dv_ind == 1) {
		*temperature = 61500;
		return RSMI_STATUS_SUCCESS;
	}
	return RSMI_STATUS_NOT_SUPPORTED;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent)
{
	*busy_percent = dv_ind == 0 ? 87u : 101u;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent)
{
	(void)dv_ind;
	*busy_percent = 33;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *used)
{
	(void)dv_ind;
	if (mem_type != RSMI_MEM_TYPE_VRAM)
		return RSMI_STATUS_NOT_SUPPORTED;
	*used = 12ull << 30;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *total)
{
	(void)dv_ind;
	if (mem_type != RSMI_MEM_TYPE_VRAM)
		return RSMI_STATUS_NOT_SUPPORTED;
	*total = 64ull << 30;
	return RSMI_STATUS_SUCCESS;
}
