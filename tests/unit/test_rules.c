/*
 * test_rules.c - classification of kernel names seen in real traces
 * (TRACES.md section 7), user rule files, and their errors.
 */
#include "testing.h"

#include <fcntl.h>
#include <unistd.h>

#include "timeline/rules.h"

static enum span_kind cls(const char *name, enum coll_type *c)
{
	return rules_classify(NULL, name, R_KERNEL, c);
}

static void test_builtin_table_classifies_real_kernel_names(void)
{
	static const struct { const char *name; enum span_kind k; enum coll_type c; } cases[] = {
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K_COMM, COLL_ALL_REDUCE },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K_COMM, COLL_ALL_GATHER },
		{ "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K_COMM, COLL_REDUCE_SCATTER },
		{ "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", K_COMM, COLL_SEND_RECV },
		{ "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", K_COMM, COLL_ALL_REDUCE },
		{ "void ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)", K_COMM, COLL_BROADCAST },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", K_COMM, COLL_SEND_RECV },
		{ "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", K_COMM, COLL_OTHER },
		{ "ncclDevKernel_Generic_1", K_COMM, COLL_OTHER },
		{ "userbuffers_fp16_sum_inplace_gpu_rr_rs", K_COMM, COLL_REDUCE_SCATTER },
		{ "userbuffers_fp16_sum_inplace_gpu_rw_ag", K_COMM, COLL_ALL_GATHER },
		{ "(anonymous namespace)::two_shot_all_reduce_kernel_inplace<float>", K_COMM, COLL_ALL_REDUCE },
		{ "cross_device_reduce_1stage<float, 8>", K_COMM, COLL_ALL_REDUCE },
		{ "void deep_ep::intranode::dispatch<8, 768>(int)", K_COMM, COLL_ALL_TO_ALL },
		/* DeepSeek's profile-data train.json (EP64, H800) */
		{ "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*)", K_COMM,
		  COLL_ALL_TO_ALL },
		{ "void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*)", K_COMM, COLL_ALL_TO_ALL },
		{ "void deep_ep::internode_ll::dispatch<8>(void*)", K_COMM, COLL_ALL_TO_ALL },
		{ "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*)", K_COMPUTE_OTHER,
		  COLL_NONE },
		{ "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", K_GEMM, COLL_NONE },
		{ "nvjet_tst_128x256", K_GEMM, COLL_NONE },
		{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", K_GEMM, COLL_NONE },
		{ "ampere_sgemm_128x64_tn", K_GEMM, COLL_NONE },
		{ "cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4", K_GEMM, COLL_NONE },
		{ "Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256", K_GEMM, COLL_NONE },
		{ "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7", K_ATTENTION, COLL_NONE },
		{ "void flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)", K_ATTENTION, COLL_NONE },
		{ "attn_fwd", K_ATTENTION, COLL_NONE },
		{ "triton_poi_fused_add_cos_sin_0", K_COMPUTE_OTHER, COLL_NONE },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", K_COMPUTE_OTHER, COLL_NONE },
		{ "__amd_rocclr_copyBuffer.kd", K_MEMCPY_OTHER, COLL_NONE },
		{ "__amd_rocclr_fillBufferAligned.kd", K_MEMSET, COLL_NONE },
		{ "aorta:all_gather:epoch0_step3_fsdp", K_COMM, COLL_ALL_GATHER },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum coll_type c;
		enum span_kind k = cls(cases[i].name, &c);
		if (k != cases[i].k || c != cases[i].c)
			fprintf(stderr, "    %s -> %s/%s\n", cases[i].name, kind_name(k), coll_type_name(c));
		CHECK_EQ_I(k, cases[i].k);
		CHECK_EQ_I(c, cases[i].c);
	}
}

static void test_memcpy_and_memset_records_by_type_and_direction(void)
{
	enum coll_type c;
	CHECK_EQ_I(rules_classify(NULL, "Memcpy HtoD (Pinned -> Device)", R_MEMCPY, &c), K_MEMCPY_H2D);
	CHECK_EQ_I(rules_classify(NULL, "Memcpy DtoH (Device -> Pageable)", R_MEMCPY, &c), K_MEMCPY_D2H);
	CHECK_EQ_I(rules_classify(NULL, "Memcpy DtoD (Device -> Device)", R_MEMCPY, &c), K_MEMCPY_D2D);
	CHECK_EQ_I(rules_classify(NULL, "Memcpy PtoP (Device -> Device)", R_MEMCPY, &c), K_MEMCPY_P2P);
	CHECK_EQ_I(rules_classify(NULL, "Memset (Device)", R_MEMSET, &c), K_MEMSET);
	/* the record type wins over a name that looks like a kernel */
	CHECK_EQ_I(rules_classify(NULL, "ncclDevKernel_AllReduce", R_MEMSET, &c), K_MEMSET);
}

/* Replaces the file at path with txt. */
static void rewrite(const char *path, const char *txt)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, txt, strlen(txt)) == (ssize_t)strlen(txt));
	if (fd >= 0)
		close(fd);
}

static void test_user_rules_come_first_and_errors_name_the_line(void)
{
	char path[] = "/tmp/aorta_rules_XXXXXX";
	int fd = mkstemp(path);
	const char *txt = "# comment\n\nall_gather ^my_custom_ag\ncomm ^myproto_\ngemm ^ncclDevKernel_Weird\n";
	CHECK(write(fd, txt, strlen(txt)) == (ssize_t)strlen(txt));
	close(fd);
	struct rules *r = NULL;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(rules_load(path, &r, &e), AORTA_OK);
	enum coll_type c;
	CHECK_EQ_I(rules_classify(r, "my_custom_ag_kernel", R_KERNEL, &c), K_COMM);
	CHECK_EQ_I(c, COLL_ALL_GATHER);
	CHECK_EQ_I(rules_classify(r, "myproto_reduce_scatter", R_KERNEL, &c), K_COMM);
	CHECK_EQ_I(c, COLL_REDUCE_SCATTER);
	CHECK_EQ_I(rules_classify(r, "ncclDevKernel_Weird", R_KERNEL, &c), K_GEMM); /* overrides built-in */
	CHECK_EQ_I(rules_classify(r, "nvjet_x", R_KERNEL, &c), K_GEMM);              /* built-in still applies */
	/* copies: by direction, unless a user rule names them (NCCL's
	 * copy-engine all-gathers are Memcpy PtoP records) */
	CHECK_EQ_I(rules_classify(r, "Memcpy PtoP (Device -> Device)", R_MEMCPY, &c), K_MEMCPY_P2P);
	CHECK_EQ_I(c, COLL_NONE);
	rules_free(r);
	rewrite(path, "all_gather ^Memcpy PtoP\n");
	r = NULL;
	CHECK_EQ_I(rules_load(path, &r, &e), AORTA_OK);
	CHECK_EQ_I(rules_classify(r, "Memcpy PtoP (Device -> Device)", R_MEMCPY, &c), K_COMM);
	CHECK_EQ_I(c, COLL_ALL_GATHER);
	CHECK_EQ_I(rules_classify(r, "Memcpy HtoD (Pinned -> Device)", R_MEMCPY, &c), K_MEMCPY_H2D);
	/* the built-in kernel table never applies to copies */
	CHECK_EQ_I(rules_classify(r, "Memcpy DtoD (gemm staging)", R_MEMCPY, &c), K_MEMCPY_D2D);
	rules_free(r);

	rewrite(path, "gemm ^ok\nbogus ^x\n");
	r = NULL;
	CHECK_EQ_I(rules_load(path, &r, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 2);
	CHECK(strstr(e.msg, "unknown kind 'bogus'") != NULL);
	CHECK(r == NULL);

	rewrite(path, "gemm ([unclosed\n");
	CHECK_EQ_I(rules_load(path, &r, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 1);
	CHECK(strstr(e.msg, "regular expression") != NULL);
	unlink(path);
	CHECK_EQ_I(rules_load("/nonexistent/rules", &r, &e), AORTA_EINPUT);
	CHECK_STR(e.path, "/nonexistent/rules");
}

static void test_busbw_factors_and_dtypes(void)
{
	CHECK_NEAR(coll_busbw_factor(COLL_ALL_REDUCE, 4), 1.5, 1e-12);
	CHECK_NEAR(coll_busbw_factor(COLL_ALL_GATHER, 4), 0.75, 1e-12);
	CHECK_NEAR(coll_busbw_factor(COLL_REDUCE_SCATTER, 8), 0.875, 1e-12);
	CHECK_NEAR(coll_busbw_factor(COLL_BROADCAST, 8), 1.0, 1e-12);
	CHECK_NEAR(coll_busbw_factor(COLL_ALL_REDUCE, 1), 1.0, 1e-12);
	CHECK_EQ_I(dtype_bytes("Float"), 4);
	CHECK_EQ_I(dtype_bytes("BFloat16"), 2);
	CHECK_EQ_I(dtype_bytes("Long"), 8);
	CHECK_EQ_I(dtype_bytes("nope"), 0);
	CHECK_EQ_I(coll_type_from_name("_allgather_base"), COLL_ALL_GATHER);
	CHECK_EQ_I(coll_type_from_name("reduce_scatter_tensor_coalesced"), COLL_REDUCE_SCATTER);
	CHECK_EQ_I(coll_type_from_name("all_to_allv"), COLL_ALL_TO_ALL);
	CHECK_EQ_I(coll_type_from_name("allreduce"), COLL_ALL_REDUCE);
}

/* The one table of collective names (vocab.c, docs/metrics.md "Collective
 * identity"): kernel names of NCCL/RCCL versions, launching host ops,
 * PyTorch's Collective names, NCCL NVTX ranges; names that say nothing. */
static void test_collective_identity_table(void)
{
	static const struct { const char *name; enum coll_type c; } cases[] = {
		{ "nccl:all_to_all", COLL_ALL_TO_ALL }, { "c10d::alltoall_base_", COLL_ALL_TO_ALL },
		{ "all_to_allv", COLL_ALL_TO_ALL }, { "ncclAllToAll", COLL_ALL_TO_ALL },
		{ "nccl:all_reduce", COLL_ALL_REDUCE }, { "c10d::allreduce_", COLL_ALL_REDUCE },
		{ "_c10d_functional::all_reduce", COLL_ALL_REDUCE }, { "allreduce_coalesced", COLL_ALL_REDUCE },
		{ "nccl:_all_gather_base", COLL_ALL_GATHER }, { "_allgather_base", COLL_ALL_GATHER },
		{ "allgather_into_tensor_coalesced", COLL_ALL_GATHER }, { "ncclAllGather", COLL_ALL_GATHER },
		{ "nccl:_reduce_scatter_base", COLL_REDUCE_SCATTER },
		{ "reduce_scatter_tensor_coalesced", COLL_REDUCE_SCATTER }, { "ncclReduceScatter", COLL_REDUCE_SCATTER },
		{ "c10d::broadcast_", COLL_BROADCAST }, { "ncclBcast", COLL_BROADCAST },
		{ "c10d::reduce_", COLL_REDUCE }, { "ncclReduce", COLL_REDUCE },
		{ "c10d::gather_", COLL_GATHER }, { "nccl:gather", COLL_GATHER },
		{ "c10d::scatter_", COLL_SCATTER },
		{ "nccl:send", COLL_SEND_RECV }, { "c10d::recv_", COLL_SEND_RECV }, { "ncclSend", COLL_SEND_RECV },
		{ "irecv", COLL_SEND_RECV },
		{ "ncclSymkDevKernel_AllReduce_RSxLDMC_AGxSTMC", COLL_ALL_REDUCE },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", COLL_SEND_RECV },
		{ "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 8>", COLL_ALL_REDUCE },
		{ "userbuffers_fp16_sum_inplace_gpu_rr_rs", COLL_REDUCE_SCATTER },
		/* names that say no collective */
		{ "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", COLL_NONE },
		{ "rcclGenericKernel", COLL_NONE }, { "wait", COLL_NONE }, { "c10d::barrier", COLL_NONE },
		{ "ncclGroupEnd", COLL_NONE }, { "record_param_comms", COLL_NONE }, { "", COLL_NONE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum coll_type c = coll_type_from_name(cases[i].name);
		if (c != cases[i].c)
			fprintf(stderr, "    '%s' -> %s, expected %s\n", cases[i].name, coll_type_name(c),
				coll_type_name(cases[i].c));
		CHECK_EQ_I(c, cases[i].c);
	}
	CHECK_EQ_I(coll_type_from_name(NULL), COLL_NONE);
	CHECK_STR(coll_type_name(COLL_GATHER), "gather");
	CHECK_STR(coll_type_name(COLL_SCATTER), "scatter");
}

int main(void)
{
	TEST(test_builtin_table_classifies_real_kernel_names);
	TEST(test_memcpy_and_memset_records_by_type_and_direction);
	TEST(test_user_rules_come_first_and_errors_name_the_line);
	TEST(test_busbw_factors_and_dtypes);
	TEST(test_collective_identity_table);
	return test_report();
}
