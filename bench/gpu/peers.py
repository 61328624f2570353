"""The kernels of bench/gpu/kernels.cpp in PyTorch on the same GPU: eager and torch.compile,
f32, timed with CUDA events (torch_models.median_ms). Run from the repository root:
python3 -m bench.gpu.peers [eager] [compile]. Prints a markdown table."""
import sys

import torch

from bench.gpu.torch_models import median_ms


def kernels():
    x26 = lambda: torch.randn(1 << 26, device="cuda")
    return [
        ("gelu 2^26", lambda x: torch.nn.functional.gelu(x), [x26]),
        ("bias+residual+relu 8192x4096", lambda x, b, r: torch.relu(x + b + r),
         [lambda: torch.randn(8192, 4096, device="cuda"), lambda: torch.randn(4096, device="cuda"),
          lambda: torch.randn(8192, 4096, device="cuda")]),
        ("softmax 16384x1024", lambda x: torch.softmax(x, dim=-1), [lambda: torch.randn(16384, 1024, device="cuda")]),
        ("layernorm 16384x1024", lambda x, w: torch.nn.functional.layer_norm(x, (1024,), w),
         [lambda: torch.randn(16384, 1024, device="cuda"), lambda: torch.randn(1024, device="cuda")]),
        ("transpose 8192x8192", lambda x: x.t().contiguous(), [lambda: torch.randn(8192, 8192, device="cuda")]),
        ("row sum 8192x8192", lambda x: x.sum(dim=1, keepdim=True), [lambda: torch.randn(8192, 8192, device="cuda")]),
    ]


def main():
    modes = sys.argv[1:] or ["eager", "compile"]
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    print("| kernel | " + " | ".join(f"{m} ms" for m in modes) + " |")
    print("|---|" + "---:|" * len(modes))
    for name, fn, makers in kernels():
        args = [m() for m in makers]
        row = []
        for mode in modes:
            f = fn if mode == "eager" else torch.compile(fn)
            row.append(f"{median_ms(f, args):.3f}")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
