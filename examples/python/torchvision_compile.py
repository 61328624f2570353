"""torch.compile(model, backend="orchid") on a torchvision model, compared with eager PyTorch.
    pip install '.[torch]' torchvision && python examples/python/torchvision_compile.py"""
import time

import torch
import torchvision

model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
compiled = torch.compile(model, backend="orchid")
with torch.inference_mode():
    start = time.perf_counter()
    y = compiled(x)  # the first call compiles: traced, translated, compiled and verified by Orchid
    print(f"compiled in {time.perf_counter() - start:.1f} s")
    want = model(x)
    error = float((y - want).norm() / want.norm())
    print(f"relative L2 error against eager: {error:.2e}")
    for name, run in [("eager", model), ("orchid", compiled)]:
        run(x)
        start = time.perf_counter()
        for _ in range(20):
            run(x)
        print(f"{name}: {(time.perf_counter() - start) / 20 * 1e3:.2f} ms per image")
assert error < 1e-4, "Orchid's result differs from eager PyTorch"
