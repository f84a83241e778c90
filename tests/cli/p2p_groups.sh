#!/usr/bin/env bash
# Point-to-point peers and process groups as each reader gives them
# (docs/formats.md, docs/metrics.md "Point to point", "What-if"):
#  - Kineto "Process Group Ranks": read into collectives[].process_group_ranks;
#    a listed rank that was read and made no call of its group makes the
#    collective incomplete, named by rank (not "unknown");
#  - the what-if offers the process groups of one kind as by_group fixes:
#    4 ranks in 2 TP groups, one slow, the gain computed by hand below;
#  - Nsight Systems: ncclDevKernel_SendRecv kernels are send_recv calls of
#    unknown peer (the real 2-GPU export carries NCCL's payload schemas but
#    no payload values); in a job of two ranks order pairs them, among three
#    they are left unmatched and said to be of unknown peer;
#  - Kineto SendRecv kernels from 2 ranks of a 128-rank job (HTA's sampled
#    ranks) are the collectives their host ops name, not send/recv;
#  - a peer outside the world, or the rank itself, is refused with a warning
#    and moves no pipeline stage.
. "$(dirname "$0")/lib.sh"

# --- TP groups: the Kineto rank set ------------------------------------------
# 4 ranks, world group "0" [0,1,2,3], TP groups "1" = tp0 [0,1] and "2" = tp1
# [2,3].  Per step, on one stream back to back: gemm G_r (300 us on ranks 0,1;
# 700 us on ranks 2,3), the TP all-reduce (both members arrive together,
# 50 us), the world all-reduce (ends 100 us after the last arrival).  The host
# launches far ahead, so the GPU chain is the step:
#   step = 700 + 50 + 100 = 850 us on every rank.
# Fixing group tp1: its gemms take the median of the same gemm on the ranks
# outside it (ranks 0,1: 300 us): step = 300 + 50 + 100 = 450 us, gain 400 us
# (47.06 %).  Fixing rank 2 (or 3) alone gains nothing: its TP partner still
# arrives at 700 us.  Fixing tp0 gains nothing (it is not on the path).
cat >"$T/gen.py" <<'PY'
import json, os, sys
out, variant = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
STEPS, T0 = 4, 25
def coll(name, pg, desc, ranks, nel):
    a = {"Collective name": name, "In msg nelems": nel, "Out msg nelems": nel,
         "Group size": len(ranks), "dtype": "Float", "Process Group Name": pg,
         "Process Group Description": desc}
    if variant != "noranks":
        a["Process Group Ranks"] = str(ranks)
    return a
for r in range(4):
    g = 300 if r < 2 else 700
    tp = ("1", "tp0", [0, 1]) if r < 2 else ("2", "tp1", [2, 3])
    ev, corr = [], 100
    for s in range(STEPS):
        h, t = s * 100, T0 + s * 850
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}",
                   "pid": 10 + r, "tid": 10 + r, "ts": h, "dur": 90})
        ops = [("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", t, g, None),
               ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t + g, 50,
                coll("allreduce", tp[0], tp[1], tp[2], 4096)),
               ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t + g + 50,
                850 - g - 50, coll("allreduce", "0", "default_pg", [0, 1, 2, 3], 1048576))]
        if variant.startswith("sendrecv"):  # the TP call as a send/recv without peers
            ops[1] = ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", t + g, 50,
                      {"Process Group Name": tp[0], "Group size": 4 if variant == "sendrecv4" else 2})
        if variant == "missing" and r == 3:
            ops = ops[:1] + ops[2:]   # rank 3 never calls its TP group
        for k, (name, ts, dur, meta) in enumerate(ops):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 10 + r, "tid": 10 + r, "ts": h + 10 * (k + 1), "dur": 5,
                       "args": {"correlation": corr}})
            args = {"device": r, "stream": 7, "correlation": corr}
            if meta:
                args.update(meta)
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": r, "tid": 7,
                       "ts": ts, "dur": dur, "args": args})
    json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 4},
               "displayTimeUnit": "ms", "traceEvents": ev}, open(f"{out}/rank{r}.json", "w"))
PY
for v in ranks noranks; do
	python3 "$T/gen.py" "$T/tp_$v" "$v" || { bad "generator failed"; continue; }
	"$A" analyze -q --skip-steps 0 --json "$T/tp_$v.json" "$T/tp_$v" 2>"$T/tp_$v.err" >/dev/null ||
		{ bad "analyze tp_$v failed: $(tail -n 2 "$T/tp_$v.err")"; continue; }
	w=".across_ranks.what_if"
	jq -e "$w.ok and $w.reproduced and ($w.replay_step_ms - 0.850 | fabs) < 0.001" "$T/tp_$v.json" >/dev/null &&
		ok || bad "tp_$v: replay not 0.850 ms: $(jq -c "$w | {ok, reproduced, replay_step_ms, reason}" "$T/tp_$v.json")"
	# by_group: the slow TP group named after its description, 450 us if fixed
	jq -e "[$w.by_group[] | select(.fix == \"group tp1\" and .ranks == \"2,3\")] | length == 1 and
	       ((.[0].step_ms_if_fixed - 0.450 | fabs) < 0.001) and ((.[0].gain_ms - 0.400 | fabs) < 0.001) and
	       ((.[0].gain_pct - 47.06 | fabs) < 0.01)" "$T/tp_$v.json" >/dev/null &&
		ok || bad "tp_$v: by_group lacks 'group tp1' (ranks 2,3) at 0.450 ms: $(jq -c "$w.by_group" "$T/tp_$v.json")"
	jq -e "[$w.by_group[] | select(.fix == \"group tp0\" and .ranks == \"0,1\" and (.gain_ms | fabs) < 0.001)] | length == 1" \
		"$T/tp_$v.json" >/dev/null && ok || bad "tp_$v: 'group tp0' missing or gains: $(jq -c "$w.by_group" "$T/tp_$v.json")"
	# the world group (every rank) is no group fix; a single rank gains nothing
	jq -e "([$w.by_group[] | select(.ranks == \"0,1,2,3\")] | length == 0) and
	       ([$w.by_rank[] | select(.gain_ms > 0.001)] | length == 0)" "$T/tp_$v.json" >/dev/null &&
		ok || bad "tp_$v: by_group/by_rank: $(jq -c "$w | {by_group, by_rank}" "$T/tp_$v.json")"
done
# the members Kineto lists travel with the collectives (and only where listed)
jq -e '[.ranks[0].collectives[] | select(.process_group == "1")][0] |
       .process_group_ranks == "0,1" and .process_group_desc == "tp0"' "$T/tp_ranks.json" >/dev/null &&
	ok || bad "collectives lack process_group_ranks: $(jq -c '.ranks[0].collectives' "$T/tp_ranks.json")"
jq -e '[.ranks[0].collectives[] | select(has("process_group_ranks"))] | length == 0' "$T/tp_noranks.json" >/dev/null &&
	ok || bad "process_group_ranks written where the trace lists none"
"$A" analyze --skip-steps 0 "$T/tp_ranks" >"$T/tp.txt" 2>&1
grep -q "group tp1" "$T/tp.txt" && ok || bad "the terminal what-if does not name group tp1"

# under MPI the process-group fields travel with the ranks: the same JSON
# (leak detection off for this run: Open MPI's own allocations are reported)
if command -v mpirun >/dev/null 2>&1 && [ -f "$(dirname "$A")/libaorta-mpi.so" ]; then
	M=(mpirun --oversubscribe)
	[ "$(id -u)" -ne 0 ] || M+=(--allow-run-as-root)
	if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	   OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 120 "${M[@]}" -np 2 "$A" analyze -q --skip-steps 0 \
		--json "$T/tp_mpi.json" "$T/tp_ranks" >"$T/mpi.log" 2>&1 &&
	   cmp -s <(jq 'del(.inputs, .tool)' "$T/tp_ranks.json") <(jq 'del(.inputs, .tool)' "$T/tp_mpi.json"); then ok; else
		bad "mpirun -np 2 on the TP set: JSON differs or failed: $(tail -n 2 "$T/mpi.log")"; fi
fi

# send/recv without peers in a group of two (Group size 2) pair by order: 4
# steps x (1 world all-reduce + 2 pairs); said to be of 4 members, they are
# left unmatched (16 calls of unknown peer)
python3 "$T/gen.py" "$T/sr2" sendrecv && python3 "$T/gen.py" "$T/sr4" sendrecv4
"$A" analyze -q --skip-steps 0 --json "$T/sr2.json" "$T/sr2" 2>/dev/null >/dev/null &&
"$A" analyze -q --skip-steps 0 --json "$T/sr4.json" "$T/sr4" 2>/dev/null >/dev/null || bad "analyze sr2/sr4 failed"
jq -e '.across_ranks.matched_collectives == 12 and (.across_ranks | has("p2p_peer_unknown") | not)' "$T/sr2.json" >/dev/null &&
	ok || bad "send/recv in groups of two: $(jq -c '.across_ranks | {matched_collectives, p2p_peer_unknown}' "$T/sr2.json")"
jq -e '.across_ranks.matched_collectives == 4 and .across_ranks.p2p_peer_unknown == 16' "$T/sr4.json" >/dev/null &&
	ok || bad "send/recv in groups of four: $(jq -c '.across_ranks | {matched_collectives, p2p_peer_unknown}' "$T/sr4.json")"

# --- a listed member that never calls its group --------------------------------
# rank 3 makes no call of tp1 [2,3] (rank 2's calls pair with nobody) and
# group "1" is listed as [0, 1, 3] on ranks 0 and 1: rank 3 is read and never
# calls it, so each of its 4 all-reduces is matched on 2 of 3 ranks, missing 3
# (from the callers alone, ranks 0 and 1, they would look complete).
python3 "$T/gen.py" "$T/miss" missing
python3 - "$T/miss" <<'PY'
import json, sys
d = sys.argv[1]
for r in (0, 1):
    f = f"{d}/rank{r}.json"
    t = json.load(open(f))
    for e in t["traceEvents"]:
        a = e.get("args", {})
        if a.get("Process Group Name") == "1":
            a["Process Group Ranks"] = "[0, 1, 3]"; a["Group size"] = 3
    json.dump(t, open(f, "w"))
PY
"$A" analyze -q --skip-steps 0 --json "$T/miss.json" "$T/miss" 2>"$T/miss.err" >/dev/null || bad "analyze miss failed"
jq -e '.across_ranks.incomplete_collectives == 4' "$T/miss.json" >/dev/null &&
	ok || bad "incomplete collectives: $(jq -c '.across_ranks | {incomplete_collectives, matched_collectives}' "$T/miss.json")"
grep -q "all_reduce in group '1' of step 1: 2 of 3 ranks, missing 3" "$T/miss.err" &&
	ok || bad "the missing member is not named: $(cat "$T/miss.err")"

# --- Nsight Systems: SendRecv of unknown peer -------------------------------------
N=../shared/data/nsys/nsys-ai/mfu_2gpu_before.sqlite
if [ -f "$N" ] && command -v sqlite3 >/dev/null; then
	# what the export holds: NCCL's payload schemas with a "Peer rank" entry,
	# but no payload values (exported without blobs)
	[ "$(sqlite3 "$N" "SELECT count(*) FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE name = 'Peer rank'")" -gt 0 ] && ok ||
		bad "the fixture has no 'Peer rank' schema entry"
	[ "$(sqlite3 "$N" "SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL")" = 0 ] &&
	[ "$(sqlite3 "$N" "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PARAM_INCLUDE_BLOBS'")" = false ] && ok ||
		bad "the fixture's NVTX payload values: the docs say it has none"
	"$A" analyze -q --json "$T/ns.json" "$N" 2>/dev/null >/dev/null || bad "analyze $N failed"
	jq -e '[.ranks[].collectives[] | select(.type == "send_recv") | .count] == [33, 33] and
	       .across_ranks.matched_collectives == 33 and (.across_ranks | has("p2p_peer_unknown") | not)' \
		"$T/ns.json" >/dev/null && ok || bad "nsys 2 ranks: $(jq -c '[.ranks[].collectives, .across_ranks.matched_collectives]' "$T/ns.json")"
	# three processes: the SendRecv kernels cannot be paired without peers
	sqlite3 "$T/three.sqlite" <<'SQL'
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
  (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
SQL
	for p in 0 1 2; do
		for k in 0 1 2 3; do
			s=$((1000000 * k + 1000 * p))
			sqlite3 "$T/three.sqlite" "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
				($s, $((s + 5000)), $p, 7, $((10 * k + 1)), $(((100 + p) << 24)), 1, 1),
				($((s + 100000)), $((1000000 * k + 300000)), $p, 7, $((10 * k + 2)), $(((100 + p) << 24)), 2, 2)"
		done
	done
	"$A" analyze --json "$T/three.json" "$T/three.sqlite" >"$T/three.txt" 2>&1 || bad "analyze three.sqlite failed"
	jq -e '.across_ranks.p2p_peer_unknown == 12 and .across_ranks.unmatched_calls >= 12 and
	       .across_ranks.matched_collectives == 4' "$T/three.json" >/dev/null &&
		ok || bad "nsys 3 ranks: $(jq -c '.across_ranks | {p2p_peer_unknown, unmatched_calls, matched_collectives}' "$T/three.json")"
	grep -q "12 send/recv calls: peer unknown" "$T/three.txt" && ok || bad "analyze does not say peer unknown"
fi
# --- Kineto: two ranks read out of 128, SendRecv kernels under named host ops -------
# Their 20 ncclKernel_SendRecv kernels were launched by nccl:all_reduce,
# nccl:all_to_all and nccl:_all_gather_base: collectives, not send/recv of
# unknown peer.  The two sampled files hold different windows of the job
# (rank 0's and rank 1's calls come in different orders), so the calls
# matched by order do not end together and the join gives no cross-rank figure.
H=../shared/data/kineto/hta/trace_filter
if [ -f "$H/sampled_rank-0.json.gz" ]; then
	"$A" analyze -q --json "$T/hta.json" "$H/sampled_rank-0.json.gz" "$H/sampled_rank-1.json.gz" 2>/dev/null ||
		bad "analyze of HTA's sampled ranks failed"
	jq -e '[.ranks[].world_size] == [128, 128] and (.across_ranks.p2p_peer_unknown // 0) == 0 and
	       ([.ranks[].collectives[] | select(.type == "send_recv")] | length) == 0 and
	       ([.ranks[0].collectives[] | .count] | add) == 10 and
	       .across_ranks.clocks_aligned == false and .across_ranks.matched_collectives == 0' \
		"$T/hta.json" >/dev/null &&
		ok || bad "HTA sampled ranks: $(jq -c '.across_ranks | {matched_collectives, p2p_peer_unknown, clocks_aligned}' "$T/hta.json")"
fi
# --- peers that cannot be: a rank outside the world, the rank itself -------------
# The 4-rank pipeline of tests/data/whatif/pp_host_fwd_r0/base (replicas {0,2}
# and {1,3}, stage 0 = ranks 0 and 1) with one send of rank 0 naming rank 99
# (a world of 4) and one send of rank 1 naming rank 1.  Taken as they are,
# rank 0 gets two neighbours and rank 2 becomes its replica's end: stages
# reversed (rank 0 in stage 1), rank 1 its own neighbour.  Refused, with a
# warning that names the first, the stages and neighbours stay those of the
# unmodified run.
python3 - "$T/ppbad" <<'PY'
import gzip, json, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for r in range(4):
    d = json.load(gzip.open(f"tests/data/whatif/pp_host_fwd_r0/base/rank{r}.json.gz", "rt"))
    done = False
    for e in d["traceEvents"]:
        a = e.get("args", {})
        if done or e.get("cat") != "kernel" or a.get("Collective name") != "send":
            continue
        if (r, a.get("Dst Rank")) in ((0, 2), (1, 3)):
            a["Dst Rank"] = 99 if r == 0 else 1
            done = True
    json.dump(d, open(f"{out}/rank{r}.json", "w"))
PY
"$A" analyze -q --json "$T/ppbad.json" "$T/ppbad" 2>"$T/ppbad.err" || bad "analyze of the bad-peer pipeline failed"
grep -q "2 send/recv calls name a peer that cannot be theirs (first: rank 0 send to rank 99, outside the world of 4 ranks" \
	"$T/ppbad.err" && ok || bad "no named warning for impossible peers: $(cat "$T/ppbad.err")"
jq -e '.across_ranks.p2p_bad_peers == 2 and [.ranks[].wait.p2p_peers] == [[2], [3], [0], [1]] and
       [.across_ranks.what_if.stages[].stage] == [0, 0, 1, 1]' "$T/ppbad.json" >/dev/null &&
	ok || bad "impossible peers changed the pipeline: $(jq -c '[.across_ranks.p2p_bad_peers, [.ranks[].wait.p2p_peers], .across_ranks.what_if.stages]' "$T/ppbad.json")"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
