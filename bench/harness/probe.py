"""Measures the two roofline numbers when Orchid's target probe is not there yet; prints JSON.

DRAM bandwidth: a STREAM-like triad a = b + s*c over float32 arrays of 2^27 elements (512 MiB
each, well past any cache), multithreaded through torch; each pass moves 4 arrays' worth of
bytes (read b, read c, write a, and the write-allocate read of a). Best of 10 passes.
fp32 GEMM peak: square matmuls of 1024 and 2048 through torch (MKL / oneDNN), onnxruntime
(MLAS) and numpy (OpenBLAS); the best GFLOP/s of any (a multiply-add counts 2).
"""
import argparse
import json
import time

import numpy as np


def best_seconds(fn, min_s=0.5, min_runs=3):
    fn()
    best, start, runs = float("inf"), time.perf_counter(), 0
    while runs < min_runs or time.perf_counter() - start < min_s:
        t0 = time.perf_counter()
        fn()
        best, runs = min(best, time.perf_counter() - t0), runs + 1
    return best


def triad_gbs(threads, n=1 << 27):
    import torch
    torch.set_num_threads(threads)
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    seconds = best_seconds(lambda: torch.add(b, c, alpha=3.0, out=a), min_s=0, min_runs=10)
    return 4 * n * 4 / seconds / 1e9


def gemm_gflops(threads):
    import onnxruntime as ort
    import torch
    from onnx import TensorProto, helper
    torch.set_num_threads(threads)
    results = {}
    for n in (1024, 2048):
        x, y = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        results[f"torch.mm {n}"] = best_seconds(lambda: torch.mm(tx, ty))
        results[f"numpy {n}"] = best_seconds(lambda: x @ y)
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "y"], ["z"])], "mm",
                                  [helper.make_tensor_value_info(k, TensorProto.FLOAT, [n, n]) for k in "xy"],
                                  [helper.make_tensor_value_info("z", TensorProto.FLOAT, [n, n])])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        results[f"onnxruntime MatMul {n}"] = best_seconds(lambda: sess.run(None, {"x": x, "y": y}))
        for k in [k for k in results if k.endswith(f" {n}")]:
            results[k] = 2 * n ** 3 / results[k] / 1e9
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    args = ap.parse_args()
    gemm = gemm_gflops(args.threads)
    best = max(gemm, key=gemm.get)
    print(json.dumps({
        "dram_bandwidth_gbs": round(triad_gbs(args.threads), 2),
        "dram_bandwidth_gbs_source": "bench/harness/probe.py: torch triad a = b + s*c, 512 MiB arrays, "
                                     "16 bytes per element (write-allocate counted), best of 10",
        "gemm_peak_gflops": round(gemm[best], 1),
        "gemm_peak_gflops_source": f"bench/harness/probe.py: best fp32 square matmul ({best})",
        "gemm_gflops": {k: round(v, 1) for k, v in gemm.items()}, "threads": args.threads}))


if __name__ == "__main__":
    main()
