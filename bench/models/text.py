"""A BERT-style encoder written out in plain torch modules (token ids in, hidden states out)."""
import math

import torch
from torch import nn

VOCAB = 30522


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, h, s, d = ctx.shape
        return self.out(ctx.transpose(1, 2).reshape(b, s, h * d))


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.attn, self.ln1 = SelfAttention(hidden, heads), nn.LayerNorm(hidden, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))


class Bert(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, max_len: int = 512):
        super().__init__()
        self.word = nn.Embedding(VOCAB, hidden)
        self.position = nn.Embedding(max_len, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads) for _ in range(layers))

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.ln(self.word(input_ids) + self.position(positions))
        for layer in self.layers:
            x = layer(x)
        return x


def bert(layers: int, hidden: int, heads: int) -> nn.Module:
    return Bert(layers, hidden, heads).eval()
