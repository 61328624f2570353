"""Micro-benchmark of fused row kernels: Softmax(axis=-1), LayerNormalization (scale, bias),
x * sigmoid(x) and Relu over a [4096, 4096] f32 tensor, each compiled with `orchid compile
--orchestrate greedy` (one kernel per model) and timed with `orchid run --bench`. The traffic
bound of each model is its compulsory DRAM traffic (read the input once, write the output
once: 64 MiB + 64 MiB) over the DRAM bandwidth Orchid's target probe measured (`orchid target
--json`). Its in-cache time is the same model's over a few rows (held in the caches: compiled
on its own, so with its own default schedule, and paying a call's fixed costs per few rows),
scaled to the full size: an estimate of what the kernel costs when memory is not the limit. A
kernel whose in-cache time lies above its traffic bound is not memory-bound on this machine,
and is compared with that time (its roofline) as well.

    /usr/bin/python3 bench/micro/fused_rows.py [--orchid build/tools/orchid/orchid]

prints the table and writes bench/results/<date>-fused-rows.md. Performance is measured here,
never asserted by tests.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS, COLS = 4096, 4096


def softmax_model(rows):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, COLS])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, COLS])
    node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
    return helper.make_graph([node], "softmax", [x], [y]), 0


def layernorm_model(rows):
    import numpy as np
    rng = np.random.default_rng(1)
    scale = numpy_helper.from_array(rng.standard_normal(COLS).astype(np.float32), "scale")
    bias = numpy_helper.from_array(rng.standard_normal(COLS).astype(np.float32), "bias")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, COLS])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, COLS])
    node = helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)
    return helper.make_graph([node], "layernorm", [x], [y], initializer=[scale, bias]), 2 * COLS * 4


def silu_model(rows):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, COLS])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, COLS])
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    return helper.make_graph(nodes, "silu", [x], [y]), 0


def relu_model(rows):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, COLS])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, COLS])
    return helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y]), 0


MODELS = {"softmax": softmax_model, "layernorm": layernorm_model, "silu": silu_model, "relu": relu_model}


def write_model(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def dram_gbs(orchid):
    out = subprocess.run([orchid, "target", "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["dram_bandwidth_gbs"]


def timed(orchid, name, rows, workdir, args):
    """Times of the model over [rows, COLS], compiled into workdir (or reused from it)."""
    graph, _ = MODELS[name](rows)
    model = os.path.join(workdir, f"{name}_{rows}.onnx")
    artifact = os.path.join(workdir, f"{name}_{rows}.orchid")
    if not (args.reuse and os.path.isdir(artifact)):
        write_model(graph, model)
        subprocess.run([orchid, "compile", model, "-o", artifact, "--orchestrate", "greedy", "--no-measure"],
                       check=True, capture_output=True, text=True)
    times = []
    for _ in range(args.repeats):
        out = subprocess.run([orchid, "run", artifact, "--bench", "--json", "--min-time", str(args.min_time),
                              "--threads", str(args.threads)], check=True, capture_output=True, text=True)
        times += json.loads(out.stdout)["times_ms"]
    return times


def bench_one(orchid, name, workdir, args):
    """The full model's times, its compulsory bytes, and the in-cache time scaled to it: the
    same kernel over --cache-rows rows (whose input and output the cores' caches hold), per
    element, times the full model's elements: the kernel without main memory's limit."""
    _, param_bytes = MODELS[name](ROWS)
    times = timed(orchid, name, ROWS, workdir, args)
    small = timed(orchid, name, args.cache_rows, workdir, args)
    in_cache = statistics.median(small) * ROWS / args.cache_rows
    return times, 2 * ROWS * COLS * 4 + param_bytes, in_cache


def table(rows, gbs, args):
    lines = [f"DRAM bandwidth {gbs:.2f} GB/s (orchid target --json); traffic bound = (input + output + parameters) "
             f"bytes / bandwidth; in cache = the median time over [{args.cache_rows}, {COLS}] (held in the caches) "
             f"scaled to [{ROWS}, {COLS}] (the kernel without main memory's limit); roofline = the larger of the two; "
             f"{args.threads} threads, {args.repeats} x --min-time {args.min_time} s.", "",
             "| model | median ms | best ms | traffic bound ms | in cache ms | memory-bound | median / traffic bound "
             "| best / traffic bound | median / roofline |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for name, times, nbytes, in_cache in rows:
        bound = nbytes / gbs / 1e6
        med, best = statistics.median(times), min(times)
        roof = max(bound, in_cache)
        lines.append(f"| {name} | {med:.2f} | {best:.2f} | {bound:.2f} | {in_cache:.2f} | "
                     f"{'yes' if in_cache < bound else 'no'} | {med / bound:.2f}x | {best / bound:.2f}x | "
                     f"{med / roof:.2f}x |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--orchid", default=os.path.join(ROOT, "build", "tools", "orchid", "orchid"))
    p.add_argument("--models", default="softmax,layernorm,silu,relu")
    p.add_argument("--cache-rows", type=int, default=64,
                   help="rows of the in-cache run (default 64: 1 MiB in, 1 MiB out)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=1, help="orchid run --bench invocations per model")
    p.add_argument("--out", default=None, help="results file (default bench/results/<date>-fused-rows.md)")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    p.add_argument("--work-dir", default=None,
                   help="keep the models and artifacts (<model>_<rows>.onnx, <model>_<rows>.orchid) here (default: a temporary one)")
    p.add_argument("--reuse", action="store_true",
                   help="time the artifacts already in --work-dir instead of compiling them (e.g. older builds')")
    args = p.parse_args()
    gbs = dram_gbs(args.orchid)
    rows = []
    with tempfile.TemporaryDirectory(prefix="orchid-fused-rows-") as tmp:
        work = args.work_dir or tmp
        os.makedirs(work, exist_ok=True)
        for name in args.models.split(","):
            times, nbytes, in_cache = bench_one(args.orchid, name, work, args)
            rows.append((name, times, nbytes, in_cache))
    text = table(rows, gbs, args)
    print(text)
    if not args.no_write:
        out = args.out or os.path.join(ROOT, "bench", "results", f"{datetime.date.today().isoformat()}-fused-rows.md")
        with open(out, "w") as f:
            f.write(f"# Fused row kernels, {datetime.datetime.now().isoformat(timespec='seconds')}\n\n"
                    f"`bench/micro/fused_rows.py`: Softmax(axis=-1), LayerNormalization (scale, bias), "
                    f"x * sigmoid(x) and Relu over f32[{ROWS}, {COLS}], `orchid compile --orchestrate greedy "
                    f"--no-measure`, `orchid run --bench`.\n\n{text}\n")
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
