"""The benchmark models (bench/models) in PyTorch on the GPU, f32: eager and torch.compile,
each timed with CUDA events (5 warm-ups, median of 50 runs) under torch.no_grad. Run from the
repository root: python3 -m bench.gpu.torch_models MODEL... [--mode default|max-autotune].
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
    ap.add_argument("--mode", default="default", help="torch.compile mode (default or max-autotune)")
    a = ap.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, torch.compile mode {a.mode}\n")
    print("| model | eager ms | torch.compile ms | compile s |\n|---|---:|---:|---:|", flush=True)
    for name in a.models:
        spec = registry.get(name)
        torch.manual_seed(registry.SEED)
        module = spec.build().cuda().eval()
        args = [torch.from_numpy(x).cuda() for x in registry.make_inputs(spec)]
        with torch.no_grad():
            eager = median_ms(module, args)
            t0 = time.time()
            compiled = torch.compile(module, mode=None if a.mode == "default" else a.mode)
            compiled(*args)
            seconds = time.time() - t0
            fast = median_ms(compiled, args)
        print(f"| {name} | {eager:.3f} | {fast:.3f} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
