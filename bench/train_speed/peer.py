# Single-GPU PyTorch eager peer of `aorta train` (bench/train_speed/run.sh):
# the model of ../shared/bench/fsdp2_peer.py (upstream's ranking transformer
# shapes) without FSDP, bf16 autocast, AdamW(0.9, 0.98, wd 0.01), clipping 1.0.
# Prints {"median_step_ms", ...} as JSON; writes a Chrome trace of 3 profiled
# steps to --out so kernel times can be compared from traces.
import argparse, json, os, time, torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity, schedule

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--out", default="peer_out")
a = ap.parse_args()
B, T, F, D, S, V, E, M, H, L, FF = a.batch, 64, 16, 128, 32, 60000, 192, 768, 12, 8, 2048
torch.manual_seed(0)
dev = torch.device("cuda")

class Net(nn.Module):
    def __init__(s):
        super().__init__(); s.emb = nn.Embedding(V, E); s.ep = nn.Linear(E, M); s.dp = nn.Linear(F * D, M)
        s.layers = nn.ModuleList([nn.TransformerEncoderLayer(M, H, FF, 0.1, "gelu", batch_first=True) for _ in range(L)])
        s.norm = nn.LayerNorm(M); s.head = nn.Sequential(nn.Linear(M, FF), nn.GELU(), nn.Dropout(0.1), nn.Linear(FF, 1))
    def forward(s, dense, cat):
        x = s.ep(s.emb(cat).mean(2)) + s.dp(dense.flatten(2))
        for l in s.layers: x = l(x)
        return s.head(s.norm(x)).squeeze(-1)

net = Net().to(dev)
opt = torch.optim.AdamW(net.parameters(), lr=3e-4, weight_decay=0.01, betas=(0.9, 0.98))
g = torch.Generator(device="cpu").manual_seed(42)
dense = torch.randn(B, T, F, D, generator=g).to(dev); cat = torch.randint(0, V, (B, T, S), generator=g).to(dev)
tgt = torch.rand(B, T, generator=g).to(dev); wt = torch.rand(B, T, generator=g).to(dev)
lossf = nn.BCEWithLogitsLoss(weight=wt)

def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", torch.bfloat16):
        out = net(dense, cat)
    loss = lossf(out.float(), tgt); loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0); opt.step(); return loss

for _ in range(10):
    step()
torch.cuda.synchronize()
tt = []
for _ in range(a.steps):
    t0 = time.perf_counter(); step(); torch.cuda.synchronize(); tt.append((time.perf_counter() - t0) * 1e3)
tt.sort()
os.makedirs(a.out, exist_ok=True)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=2, active=3, repeat=1),
             on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(a.out, "peer_trace.json"))) as prof:
    for _ in range(6):
        step(); torch.cuda.synchronize(); prof.step()
print(json.dumps({"peer": "pytorch-eager", "batch": B, "median_step_ms": tt[len(tt) // 2], "min_step_ms": tt[0],
                  "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}))
