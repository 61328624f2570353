"""The Korch evaluation shapes as small torch modules: a Segformer-B0-style encoder, a
Candy-style fast style-transfer network and an EfficientViT-style linear-attention block."""
import torch
from torch import nn
from torch.nn import functional as F


# --- Segformer-B0-style encoder (Mix Transformer): 4 stages, widths 32/64/160/256 ---------------

class EfficientSelfAttention(nn.Module):
    """Attention whose keys and values come from the sequence shrunk by a strided conv (ratio sr)."""

    def __init__(self, dim: int, heads: int, sr: int):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.q, self.kv, self.proj = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)
        self.sr = nn.Conv2d(dim, dim, sr, stride=sr) if sr > 1 else None
        self.norm = nn.LayerNorm(dim) if sr > 1 else None

    def forward(self, x, h: int, w: int):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        if self.sr is not None:
            x = self.norm(self.sr(x.transpose(1, 2).reshape(b, c, h, w)).flatten(2).transpose(1, 2))
        kv = self.kv(x).reshape(b, -1, 2, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(torch.matmul(q, kv[0].transpose(-1, -2)) * self.scale, dim=-1)
        return self.proj(torch.matmul(attn, kv[1]).transpose(1, 2).reshape(b, n, c))


class MixFfn(nn.Module):
    """Linear, 3x3 depthwise conv on the token grid, GELU, linear."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.dw = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden)

    def forward(self, x, h: int, w: int):
        x = self.fc1(x)
        b, n, c = x.shape
        x = self.dw(x.transpose(1, 2).reshape(b, c, h, w)).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(x))


class MitBlock(nn.Module):
    def __init__(self, dim: int, heads: int, sr: int):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), EfficientSelfAttention(dim, heads, sr)
        self.norm2, self.ffn = nn.LayerNorm(dim), MixFfn(dim, 4 * dim)

    def forward(self, x, h: int, w: int):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.ffn(self.norm2(x), h, w)


class MitStage(nn.Module):
    """Overlapped patch embedding (a strided conv larger than its stride), blocks, LayerNorm."""

    def __init__(self, cin: int, dim: int, patch: int, stride: int, heads: int, sr: int, depth: int = 2):
        super().__init__()
        self.embed = nn.Conv2d(cin, dim, patch, stride=stride, padding=patch // 2)
        self.embed_norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(MitBlock(dim, heads, sr) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.embed(x)
        b, c, h, w = x.shape
        x = self.embed_norm(x.flatten(2).transpose(1, 2))
        for block in self.blocks:
            x = block(x, h, w)
        return self.norm(x).transpose(1, 2).reshape(b, c, h, w)


class SegformerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        dims, heads, srs = (32, 64, 160, 256), (1, 2, 5, 8), (8, 4, 2, 1)
        cins = (3,) + dims[:-1]
        self.stages = nn.ModuleList(
            MitStage(cins[i], dims[i], 7 if i == 0 else 3, 4 if i == 0 else 2, heads[i], srs[i]) for i in range(4))

    def forward(self, x):
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return tuple(features)


# --- Candy-style fast style transfer (Johnson et al.): 224x224 -----------------------------------

class ConvLayer(nn.Sequential):
    """Reflection pad, conv, InstanceNorm, optional ReLU."""

    def __init__(self, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True, norm: bool = True):
        layers = [nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride)]
        if norm:
            layers.append(nn.InstanceNorm2d(cout, affine=True))
        if relu:
            layers.append(nn.ReLU())
        super().__init__(*layers)


class Residual(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.body = nn.Sequential(ConvLayer(c, c, 3), ConvLayer(c, c, 3, relu=False))

    def forward(self, x):
        return x + self.body(x)


class Upsample(nn.Module):
    """Nearest-neighbour upsampling by 2, then a conv layer (instead of a transposed conv)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = ConvLayer(cin, cout, 3)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


def candy() -> nn.Module:
    return nn.Sequential(
        ConvLayer(3, 32, 9), ConvLayer(32, 64, 3, 2), ConvLayer(64, 128, 3, 2),
        *[Residual(128) for _ in range(5)],
        Upsample(128, 64), Upsample(64, 32), ConvLayer(32, 3, 9, relu=False, norm=False)).eval()


# --- EfficientViT-style block: multi-scale ReLU linear attention + MBConv ------------------------

class LiteMla(nn.Module):
    """qkv by 1x1 conv; a 5x5 depthwise + grouped 1x1 branch adds a second scale; attention is
    ReLU(q) (ReLU(k)^T v) / (ReLU(q) sum ReLU(k)), linear in the number of tokens."""

    def __init__(self, dim: int, head_dim: int = 16):
        super().__init__()
        self.heads, self.head_dim = dim // head_dim, head_dim
        self.qkv = nn.Conv2d(dim, 3 * dim, 1, bias=False)
        self.aggregate = nn.Sequential(nn.Conv2d(3 * dim, 3 * dim, 5, padding=2, groups=3 * dim, bias=False),
                                       nn.Conv2d(3 * dim, 3 * dim, 1, groups=3 * self.heads, bias=False))
        self.proj = nn.Sequential(nn.Conv2d(2 * dim, dim, 1, bias=False), nn.BatchNorm2d(dim))

    def attend(self, qkv):
        b, _, h, w = qkv.shape
        qkv = qkv.reshape(b, -1, 3 * self.head_dim, h * w).transpose(-1, -2)
        q, k, v = torch.relu(qkv[..., :self.head_dim]), torch.relu(qkv[..., self.head_dim:2 * self.head_dim]), \
            qkv[..., 2 * self.head_dim:]
        kv = torch.matmul(k.transpose(-1, -2), v)
        num = torch.matmul(q, kv)
        den = torch.matmul(q, k.sum(dim=-2, keepdim=True).transpose(-1, -2))
        out = num / (den + 1e-15)
        return out.transpose(-1, -2).reshape(b, -1, h, w)

    def forward(self, x):
        qkv = self.qkv(x)
        multi = torch.cat([qkv, self.aggregate(qkv)], dim=1)
        return self.proj(self.attend(multi))


class MbConv(nn.Module):
    def __init__(self, dim: int, expand: int = 4):
        super().__init__()
        mid = dim * expand
        self.body = nn.Sequential(
            nn.Conv2d(dim, mid, 1), nn.Hardswish(),
            nn.Conv2d(mid, mid, 3, padding=1, groups=mid), nn.Hardswish(),
            nn.Conv2d(mid, dim, 1, bias=False), nn.BatchNorm2d(dim))

    def forward(self, x):
        return self.body(x)


class EfficientVitBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.context, self.local = LiteMla(dim), MbConv(dim)

    def forward(self, x):
        x = x + self.context(x)
        return x + self.local(x)


def _randomize_bn(model: nn.Module) -> nn.Module:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def specs():
    from .registry import Input, ModelSpec
    return [
        ModelSpec("segformer_b0", "korch", lambda: SegformerEncoder().eval(), (Input("x", (1, 3, 512, 512)),),
                  outputs=("f1", "f2", "f3", "f4"),
                  note="Segformer-B0-style encoder (MiT-B0), 512x512, four stage outputs", default=True),
        ModelSpec("candy", "korch", candy, (Input("x", (1, 3, 224, 224)),),
                  note="Candy-style style transfer: reflection pad, conv, InstanceNorm, 5 residual blocks, "
                       "nearest upsampling; 224x224", default=True),
        ModelSpec("efficientvit_block", "korch", lambda: _randomize_bn(EfficientVitBlock(128)),
                  (Input("x", (1, 128, 32, 32)),),
                  note="EfficientViT-style block (LiteMLA linear attention + MBConv), width 128, 32x32",
                  default=True),
    ]
