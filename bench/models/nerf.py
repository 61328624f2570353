"""Welder's NeRF MLP: 8 layers of width 256 with a skip at layer 5, a density head, and a
view-dependent colour head, over a batch of 4096 rays' encoded positions and directions."""
import torch
from torch import nn


class NerfMlp(nn.Module):
    def __init__(self, pos_dim: int = 63, dir_dim: int = 27, width: int = 256, depth: int = 8, skip: int = 4):
        super().__init__()
        self.skip = skip
        self.layers = nn.ModuleList(
            nn.Linear(pos_dim if i == 0 else width + (pos_dim if i == skip + 1 else 0), width) for i in range(depth))
        self.sigma, self.feature = nn.Linear(width, 1), nn.Linear(width, width)
        self.color = nn.Sequential(nn.Linear(width + dir_dim, width // 2), nn.ReLU(), nn.Linear(width // 2, 3))

    def forward(self, pos, dirs):
        h = pos
        for i, layer in enumerate(self.layers):
            h = torch.relu(layer(h))
            if i == self.skip:
                h = torch.cat([pos, h], dim=-1)
        rgb = torch.sigmoid(self.color(torch.cat([self.feature(h), dirs], dim=-1)))
        return torch.cat([rgb, torch.relu(self.sigma(h))], dim=-1)


def specs():
    from .registry import Input, ModelSpec
    return [ModelSpec("nerf_mlp", "welder", lambda: NerfMlp().eval(),
                      (Input("pos", (4096, 63)), Input("dirs", (4096, 27))),
                      note="NeRF MLP: 8 layers x 256, skip at layer 5, 4096 rays", default=True)]
