#!/usr/bin/env bash
# CLI tests of aorta tune-tp that need no GPU: help, usage errors (exit 2),
# bad model input (exit 3, the file and field named) and the GPU checks
# (exit 4) - each rejected before any GPU work, in that order.  The
# tuning itself is tested on the CPU in tests/unit/test_tp.c (fake backend)
# and on GPUs by the plug-in's tests.
. "$(dirname "$0")/lib.sh"

F=tests/fixtures/tp
export HF_HOME="$T/hf" HF_HUB_CACHE="$T/hf/hub"   # never the user's cache
mkdir -p "$HF_HUB_CACHE"
NOGPU="env AORTA_GPU_LIB=$T/no-such-plugin.so"

# --- help and usage: exit 2 --------------------------------------------------
expect "tune-tp -h" 0 "^usage: aorta tune-tp" -- $A tune-tp -h
expect "help lists --max-num-sm" 0 "--max-num-sm" -- $A tune-tp -h
expect "no model" 2 "needs --model-name NAME or --model-config FILE" -- $A tune-tp
expect "unknown operator" 2 "unknown operator 'bogus'" -- $A tune-tp --model-name llama-3-8b --operators fc1 bogus
expect "unknown operator, comma list" 2 "unknown operator 'attn'" -- $A tune-tp --model-name llama-3-8b --operators fc1,attn
expect "empty operator list" 2 "names no operator" -- $A tune-tp --model-name llama-3-8b --operators ,
expect "stray argument" 2 "unexpected argument 'fc1'" -- $A tune-tp --model-name llama-3-8b fc1
expect "bad --max-tp-size" 2 "--max-tp-size 3: expected 2, 4 or 8" -- $A tune-tp --model-name llama-3-8b --max-tp-size 3
expect "bad SM range" 2 "--min-num-sm 0" -- $A tune-tp --model-name llama-3-8b --min-num-sm 0
expect "SM range above UB_MAX_SM" 2 "max <= 32" -- $A tune-tp --model-name llama-3-8b --max-num-sm 64
expect "bad dtype" 2 "--dtype 'fp8'" -- $A tune-tp --model-name llama-3-8b --dtype fp8
expect "bad threshold" 2 "overlap-threshold" -- $A tune-tp --model-name llama-3-8b --overlap-threshold 2
expect "list models" 0 "meta-llama/Meta-Llama-3-8B +4096 +14336 +32 +8 +128 +yes" -- $A tune-tp --list-models

# --- bad model input: exit 3, before the plug-in is even loaded ----------------
expect "unknown model" 3 "unknown model 'acme/NoSuchModel-7B'" -- $NOGPU $A tune-tp --model-name acme/NoSuchModel-7B
expect "config.json without hidden_size" 3 "'$F/missing-hidden.config.json'.*missing field 'hidden_size'" -- \
	$NOGPU $A tune-tp --model-config $F/missing-hidden.config.json
expect "config.json with a string for heads" 3 "'num_attention_heads' is not a positive integer" -- \
	$NOGPU $A tune-tp --model-config $F/bad-heads.config.json
expect "truncated config.json" 3 "'$F/truncated.config.json'.*invalid JSON" -- \
	$NOGPU $A tune-tp --model-config $F/truncated.config.json
expect "missing config.json" 3 "'$T/none.json'.*cannot open" -- $NOGPU $A tune-tp --model-config "$T/none.json"
expect "heads not divisible by TP 8" 3 "num_attention_heads 28 .* not divisible by TP 8; use --max-tp-size 4" -- \
	$NOGPU $A tune-tp --model-name Qwen/Qwen2.5-7B --max-tp-size 8
expect "tokens not divisible by TP" 3 "--max-token-len 8191 must be a positive multiple of 8" -- \
	$NOGPU $A tune-tp --model-name llama-3-8b --max-token-len 8191

# the HF cache is searched before the built-in table
mkdir -p "$HF_HUB_CACHE/models--acme--Tiny/snapshots/abc"
cp $F/missing-hidden.config.json "$HF_HUB_CACHE/models--acme--Tiny/snapshots/abc/config.json"
expect "HF cache config.json is read" 3 "models--acme--Tiny/snapshots/abc/config.json.*hidden_size" -- \
	$NOGPU $A tune-tp --model-name acme/Tiny

# --- GPU checks: exit 4 after the argument and model checks ---------------------
expect "no plug-in" 4 "cannot load the GPU code" -- $NOGPU $A tune-tp --model-name llama-3-8b --max-tp-size 4
expect "upstream-style operator list reaches the GPU check" 4 "cannot load the GPU code" -- \
	$NOGPU $A tune-tp --model-config $F/llama3-8b.config.json --operators fc1 fc2 --max-tp-size 2
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	# the real plug-in on a machine without a GPU: a clear exit 4, no outputs
	expect "no GPU visible" 4 "GPU" -- $A tune-tp --model-name llama-3-8b --max-tp-size 4 --output-dir "$T/out"
	[ ! -e "$T/out/tuning_report.json" ] && ok || bad "no GPU: tuning_report.json written"
fi

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
