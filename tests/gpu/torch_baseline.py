"""PyTorch eager baseline of the same training step (upstream's model, batch 8):
zero_grad + forward + backward + clip_grad_norm_(1.0) + AdamW, bf16 autocast or
fp32.  Prints the median step time (CUDA events).  Run on the device machine."""
import sys
import torch
import torch.nn as nn

V, E, F, D, T, S, M, H, L, FFN, MLP, B = 60000, 192, 16, 128, 64, 32, 768, 12, 8, 2048, 2048, 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.emb_proj = nn.Linear(E, M)
        self.dense_proj = nn.Linear(F * D, M)
        layer = nn.TransformerEncoderLayer(M, H, FFN, 0.1, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(M)
        self.head = nn.Sequential(nn.Linear(M, MLP), nn.GELU(), nn.Dropout(0.1), nn.Linear(MLP, 1))

    def forward(self, dense, cat):
        x = self.emb_proj(self.emb(cat).mean(dim=2)) + self.dense_proj(dense.flatten(2))
        return self.head(self.norm(self.enc(x))).squeeze(-1)


def bench(prec):
    torch.manual_seed(0)
    dev = "cuda"
    m = Model().to(dev)
    print(f"# torch params {sum(p.numel() for p in m.parameters())}")
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01)
    dense = torch.randn(B, T, F, D, device=dev)
    cat = torch.randint(0, V, (B, T, S), device=dev)
    tgt = torch.rand(B, T, device=dev)
    w = torch.rand(B, T, device=dev) + 0.5
    lossf = nn.BCEWithLogitsLoss(weight=w)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=prec == "bf16"):
            out = m(dense, cat)
        loss = lossf(out.float(), tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    print(f"# torch eager {prec} B{B}: step median {ts[15]:.3f} ms (min {ts[0]:.3f})")


for p in sys.argv[1:] or ["bf16", "fp32"]:
    bench(p)
