#!/usr/bin/python3
"""Exports a PyTorch model with seeded random weights to ONNX (opset 17), with a seeded
input and PyTorch's own output, for Orchid's end-to-end checks:

  export_torch.py MODEL OUT_DIR    writes OUT_DIR/MODEL/{model.onnx, input.npy, output.npy}

MODEL: tiny_cnn (a small conv net, committed as test data), resnet18, mobilenet_v2,
vit_small (torchvision ViT, 4 layers, width 128). Needs Debian's python3-torch and
python3-torchvision (scripts/install-deps.sh --torch); no downloads (weights=None).
"""
import os
import sys

import numpy as np
import torch
import torchvision


class TinyCnn(torch.nn.Module):
    """Conv-BN-ReLU, a depthwise conv, pooling, a residual add, softmax: the core op set."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = y + torch.nn.functional.gelu(self.dw(y))
        y = self.pool(y).mean(dim=(2, 3))
        return torch.softmax(self.fc(y), dim=-1)


def build(name):
    if name == "tiny_cnn":
        return TinyCnn(), (2, 3, 16, 16)
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)
    if name == "vit_small":
        return torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4, num_heads=4,
                                                    hidden_dim=128, mlp_dim=512), (1, 3, 224, 224)
    sys.exit(f"unknown model {name}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, out = sys.argv[1], os.path.join(sys.argv[2], sys.argv[1])
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(20261122)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    model, shape = build(name)
    model.eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):  # random statistics, so BatchNorm does something
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
            if isinstance(m, torch.nn.Linear) and not m.weight.any():  # ViT's head starts at zero
                torch.nn.init.normal_(m.weight, std=0.05)
    x = torch.randn(*shape)
    # Exported without torch.no_grad(): the inference fast paths of attention have no export.
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"), opset_version=17,
                      input_names=["x"], output_names=["y"])
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(out, "input.npy"), x.numpy())
    np.save(os.path.join(out, "output.npy"), y.numpy())
    print(f"wrote {out}: input {tuple(x.shape)}, output {tuple(y.shape)}")


if __name__ == "__main__":
    main()
