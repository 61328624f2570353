"""Mirage's benchmark set as standalone models (fp32): attention in three variants (multi-head,
group-query with 8 query heads per kv head, multi-query) at three phases (incremental decoding:
1 query token against 4096 kv tokens; speculative decoding: 32 query tokens; prefill: 512
tokens attending to themselves), LoRA, an adapter MLP, a gated MLP and RMSNorm + linear.
Attention inputs are q [1, 32, Lq, 128], k and v [1, Hkv, Lkv, 128]; the MLP-shaped blocks
take 16 tokens of width 4096 (weights are initializers)."""
import math

import torch
from torch import nn

Q_HEADS, HEAD_DIM, TOKENS, WIDTH = 32, 128, 16, 4096
KV_HEADS = {"mha": Q_HEADS, "gqa": Q_HEADS // 8, "mqa": 1}
PHASES = {"decode": (1, 4096), "spec": (32, 4096), "prefill": (512, 512)}  # (query tokens, kv tokens)


class Attention(nn.Module):
    """softmax(q k^T / sqrt(d)) v with the query heads of one kv head folded into its rows.
    `exp_normalised`: the softmax written as Mirage's programs write it, exp(s) / sum(exp(s))
    without subtracting the row maximum (LAX: linear, algebraic and exponential only)."""

    def __init__(self, kv_heads: int, exp_normalised: bool = False):
        super().__init__()
        self.group = Q_HEADS // kv_heads
        self.exp_normalised = exp_normalised

    def forward(self, q, k, v):
        b, h, lq, d = q.shape
        q = q.reshape(b, k.shape[1], self.group * lq, d)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
        if self.exp_normalised:
            e = torch.exp(scores)
            p = e / e.sum(dim=-1, keepdim=True)
        else:
            p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, v).reshape(b, h, lq, d)


class Lora(nn.Module):
    """W x + B (A x), rank 16."""

    def __init__(self, rank: int = 16):
        super().__init__()
        self.w = nn.Linear(WIDTH, WIDTH, bias=False)
        self.a, self.b = nn.Linear(WIDTH, rank, bias=False), nn.Linear(rank, WIDTH, bias=False)
        nn.init.normal_(self.b.weight, std=0.02)  # B starts at zero in LoRA training; not here

    def forward(self, x):
        return self.w(x) + self.b(self.a(x))


class AdapterMlp(nn.Module):
    """x + up(ReLU(down(x))): a bottleneck adapter of width 64."""

    def __init__(self, bottleneck: int = 64):
        super().__init__()
        self.down, self.up = nn.Linear(WIDTH, bottleneck), nn.Linear(bottleneck, WIDTH)

    def forward(self, x):
        return x + self.up(torch.relu(self.down(x)))


class GatedMlp(nn.Module):
    """SiLU(x W1) * (x W2), as in Mirage's gated-MLP benchmark."""

    def __init__(self):
        super().__init__()
        self.w1, self.w2 = nn.Linear(WIDTH, WIDTH, bias=False), nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        g = self.w1(x)
        return g * torch.sigmoid(g) * self.w2(x)


class RmsNormLinear(nn.Module):
    """RMSNorm (written out: x / sqrt(mean(x^2) + eps) * g) followed by a linear layer."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.rand(WIDTH) + 0.5)
        self.linear = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        x = x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6) * self.gain
        return self.linear(x)


def specs():
    from .registry import Input, ModelSpec
    out = []
    for variant, kv in KV_HEADS.items():
        for phase, (lq, lkv) in PHASES.items():
            name = f"{variant}_{phase}"
            out.append(ModelSpec(
                name, "mirage", (lambda kv=kv: Attention(kv).eval()),
                (Input("q", (1, Q_HEADS, lq, HEAD_DIM)), Input("k", (1, kv, lkv, HEAD_DIM)),
                 Input("v", (1, kv, lkv, HEAD_DIM))),
                note=f"{variant.upper()} attention, {phase}: {Q_HEADS} query heads, {kv} kv heads, "
                     f"{lq} query x {lkv} kv tokens, head dim {HEAD_DIM}",
                default=(name == "gqa_decode")))
    lq, lkv = PHASES["decode"]
    kv = KV_HEADS["gqa"]
    out.append(ModelSpec(
        "gqa_decode_exp", "mirage", lambda: Attention(kv, exp_normalised=True).eval(),
        (Input("q", (1, Q_HEADS, lq, HEAD_DIM)), Input("k", (1, kv, lkv, HEAD_DIM)),
         Input("v", (1, kv, lkv, HEAD_DIM))),
        note="GQA attention, decode, with the softmax as exp(s) / sum(exp(s)) (Mirage's LAX program: "
             "no maximum subtracted)"))
    x = (Input("x", (TOKENS, WIDTH)),)
    out += [
        ModelSpec("lora", "mirage", lambda: Lora().eval(), x, note="LoRA W x + B A x, rank 16, 16x4096",
                  default=True),
        ModelSpec("adapter_mlp", "mirage", lambda: AdapterMlp().eval(), x,
                  note="adapter MLP x + up(relu(down x)), 4096 -> 64 -> 4096, 16 tokens"),
        ModelSpec("gated_mlp", "mirage", lambda: GatedMlp().eval(), x,
                  note="gated MLP silu(x W1) * (x W2), 4096x4096 weights, 16 tokens", default=True),
        ModelSpec("rmsnorm_linear", "mirage", lambda: RmsNormLinear().eval(), x,
                  note="RMSNorm then a 4096x4096 linear, 16 tokens"),
    ]
    return out
