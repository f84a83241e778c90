/*
 * shapes.c - TE's names and the per-rank problem of every tuned operator
 * phase (the table at the top of tp.h; docs/tune-tp.md derives it).
 *
 * With S tokens (sequence parallel, micro-batch 1), hidden h, and per rank
 *   n_qkv = (heads + 2 kv_heads) head_dim / tp     (GQA-aware)
 *   n_fc1 = intermediate (x2 when gated) / tp       (gated-MLP-aware)
 *   k_proj = heads head_dim / tp,  k_fc2 = intermediate / tp
 * every collective moves the full [S, h] activation (its gathered or
 * unreduced form; each rank holds [S/tp, h] of it).  TP = 1 is the same
 * GEMM with tp = 1 and no communication (the scaling baseline).
 */
#include <stdio.h>
#include <string.h>

#include "tp/tp_host.h"

static const char *op_names[TP__NOPS] = { "qkv", "proj", "fc1", "fc2" };
static const char *phase_names[TP__NPHASES] = { "fprop", "dgrad", "wgrad" };
static const char *method_names[TP__NMETHODS] = { "none", "bulk", "ring_exchange", "pipeline" };

const char *tp_op_name(enum tp_op o)
{
	return (unsigned)o < TP__NOPS ? op_names[o] : "?";
}

const char *tp_phase_name(enum tp_phase p)
{
	return (unsigned)p < TP__NPHASES ? phase_names[p] : "?";
}

const char *tp_method_name(enum tp_method m)
{
	return (unsigned)m < TP__NMETHODS ? method_names[m] : "?";
}

const char *tp_dtype_name(enum tp_dtype d)
{
	switch (d) {
	case TP_BF16: return "bf16";
	case TP_FP16: return "fp16";
	case TP_FP32: return "fp32";
	}
	return "?";
}

const char *tp_coll_name(enum tp_coll c)
{
	return c == TP_AG ? "all_gather" : "reduce_scatter";
}

int tp_op_parse(const char *s, enum tp_op *o)
{
	for (int i = 0; i < TP__NOPS; i++)
		if (s && strcmp(s, op_names[i]) == 0) {
			*o = (enum tp_op)i;
			return 0;
		}
	return -1;
}

int tp_dtype_parse(const char *s, enum tp_dtype *d)
{
	if (!s)
		return -1;
	if (!strcmp(s, "bf16") || !strcmp(s, "bfloat16"))
		*d = TP_BF16;
	else if (!strcmp(s, "fp16") || !strcmp(s, "float16"))
		*d = TP_FP16;
	else if (!strcmp(s, "fp32") || !strcmp(s, "float32"))
		*d = TP_FP32;
	else
		return -1;
	return 0;
}

int tp_dtype_bytes(enum tp_dtype d)
{
	return d == TP_FP32 ? 4 : 2;
}

void tp_layer_name(enum tp_op o, enum tp_phase p, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", tp_op_name(o), tp_phase_name(p));
}

int tp_phase_tuned(enum tp_op o, enum tp_phase p)
{
	if (p == TP_WGRAD)
		return o == TP_QKV || o == TP_FC1;
	return (unsigned)p < TP__NPHASES && (unsigned)o < TP__NOPS;
}

static int column_parallel(enum tp_op o)
{
	return o == TP_QKV || o == TP_FC1;
}

/* the config.json to name in errors ("" for a built-in model) */
static const char *src_path(const struct tp_model *m)
{
	return strncmp(m->source, "built-in", 8) ? m->source : "";
}

enum aorta_status tp_shape_make(const struct tp_model *m, enum tp_op o, enum tp_phase p, int tp,
				long long tokens, enum tp_dtype dt, struct tp_shape *out,
				struct aorta_error *e)
{
	memset(out, 0, sizeof(*out));
	if (tp < 1)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "tp size %d must be >= 1", tp);
	if (!tp_phase_tuned(o, p))
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "%s %s is not tuned (TE's external method)",
				  tp_op_name(o), tp_phase_name(p));
	if (tokens <= 0 || tokens % tp || tokens % 8)
		return aorta_fail(e, AORTA_EINPUT, "", 0, -1,
				  "--max-token-len %lld must be a positive multiple of 8 and of TP %d (sequence "
				  "parallelism splits the tokens; GEMM rows are 16-byte aligned)", tokens, tp);
	if (m->heads % tp)
		return aorta_fail(e, AORTA_EINPUT, src_path(m), 0, -1,
				  "num_attention_heads %lld of '%s' is not divisible by TP %d", m->heads, m->name, tp);
	if (m->kv_heads % tp)
		return aorta_fail(e, AORTA_EINPUT, src_path(m), 0, -1,
				  "num_key_value_heads %lld of '%s' is not divisible by TP %d (Megatron needs "
				  "num_query_groups %% TP == 0)", m->kv_heads, m->name, tp);
	if (m->intermediate % tp)
		return aorta_fail(e, AORTA_EINPUT, src_path(m), 0, -1,
				  "intermediate_size %lld of '%s' is not divisible by TP %d", m->intermediate, m->name, tp);

	long long n_col = o == TP_QKV ? (m->heads + 2 * m->kv_heads) * m->head_dim / tp
				      : m->intermediate * (m->gated ? 2 : 1) / tp;
	long long k_row = o == TP_PROJ ? m->heads * m->head_dim / tp : m->intermediate / tp;

	out->op = o;
	out->phase = p;
	out->tp = tp;
	out->dtype = dt;
	out->coll_rows = tokens;
	out->coll_cols = m->hidden;
	if (column_parallel(o)) {
		switch (p) {
		case TP_FPROP: /* AG(X) then Y = X W */
			out->coll = TP_AG;
			out->m = tokens, out->k = m->hidden, out->n = n_col;
			break;
		case TP_DGRAD: /* dX = dY W^T, independent AG of X for wgrad */
			out->coll = TP_AG;
			out->bulk_only = 1;
			out->m = tokens, out->k = n_col, out->n = m->hidden;
			break;
		default: /* dW = X^T dY, independent RS of dgrad's output */
			out->coll = TP_RS;
			out->bulk_only = 1;
			out->m = m->hidden, out->k = tokens, out->n = n_col;
			break;
		}
	} else {
		if (p == TP_FPROP) { /* Y = X W then RS(Y) */
			out->coll = TP_RS;
			out->m = tokens, out->k = k_row, out->n = m->hidden;
		} else { /* AG(dY) then dX = dY W^T */
			out->coll = TP_AG;
			out->m = tokens, out->k = m->hidden, out->n = k_row;
		}
	}
	/* the plug-in's GEMMs need 16-byte rows (cuBLASLt, vectorised copies) */
	if (out->n % 8 || out->k % 8)
		return aorta_fail(e, AORTA_EINPUT, src_path(m), 0, -1,
				  "%s %s at TP %d: GEMM n %lld and k %lld must be multiples of 8", tp_op_name(o),
				  tp_phase_name(p), tp, out->n, out->k);
	return AORTA_OK;
}

static long long maxll(long long a, long long b)
{
	return a > b ? a : b;
}

long long tp_shape_max_elems(const struct tp_shape *s)
{
	return maxll(maxll(s->m * s->k, s->k * s->n), maxll(s->m * s->n, s->coll_rows * s->coll_cols));
}

double tp_shape_flops(const struct tp_shape *s)
{
	return 2.0 * (double)s->m * (double)s->n * (double)s->k;
}

double tp_shape_coll_bytes(const struct tp_shape *s)
{
	return (double)s->coll_rows * (double)s->coll_cols * tp_dtype_bytes(s->dtype);
}
