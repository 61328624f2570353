"""The benchmark models (bench/models) in PyTorch on the GPU, f32 (no TF32 unless --tf32, to
compare with artifacts compiled with --precision tf32; --dtype bf16|fp16 converts the model
and its float inputs, to compare with --precision bf16|fp16): eager and torch.compile in each
mode asked for, each timed with CUDA events (5 warm-ups, median of 50 runs) under
torch.no_grad. Run from the repository root:
python3 -m bench.gpu.torch_models MODEL... [--modes default,max-autotune] [--tf32] [--dtype bf16].
Prints a markdown table, a row as soon as a model is done."""
import argparse
import statistics
import time

import torch

from bench.models import registry


def median_ms(fn, args):
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(50):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--modes", default="default", help="torch.compile modes, comma-separated (default, max-autotune, ...)")
    ap.add_argument("--tf32", action="store_true", help="allow TF32 in matmuls and convolutions")
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"],
                    help="the model's parameters and float inputs in this dtype")
    a = ap.parse_args()
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    modes = a.modes.split(",")
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.set_float32_matmul_precision("high" if a.tf32 else "highest")
    precision = a.dtype + " parameters and inputs" if a.dtype != "fp32" else "TF32 allowed" if a.tf32 else "f32 without TF32"
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, {precision}\n")
    head = "".join(f" {m} ms | {m} compile s |" for m in modes)
    print("| model | eager ms |" + head + "\n|---|---:|" + "---:|---:|" * len(modes), flush=True)
    for name in a.models:
        spec = registry.get(name)
        torch.manual_seed(registry.SEED)
        module = spec.build().cuda().eval().to(dtype)
        args = [torch.from_numpy(x).cuda() for x in registry.make_inputs(spec)]
        args = [x.to(dtype) if x.is_floating_point() else x for x in args]
        cells = []
        with torch.no_grad():
            eager = median_ms(module, args)
            for mode in modes:
                torch._dynamo.reset()
                t0 = time.time()
                compiled = torch.compile(module, mode=None if mode == "default" else mode)
                compiled(*args)
                seconds = time.time() - t0
                cells.append(f" {median_ms(compiled, args):.3f} | {seconds:.0f} |")
        print(f"| {name} | {eager:.3f} |" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
