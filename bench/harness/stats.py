"""Summaries of timings and the checks that compare outputs."""
import numpy as np


def summarize(times_ms):
    t = np.asarray(times_ms, dtype=np.float64)
    return {"median_ms": float(np.median(t)), "p10_ms": float(np.percentile(t, 10)),
            "p90_ms": float(np.percentile(t, 90)), "runs": int(t.size), "total_timed_s": float(t.sum() / 1e3)}


def compare(reference, outputs, tolerance):
    """(ok, max relative error, reason): the largest |out - ref| over max |ref| of any output."""
    if len(reference) != len(outputs):
        return False, None, f"{len(outputs)} outputs, onnxruntime has {len(reference)}"
    worst = 0.0
    for i, (ref, out) in enumerate(zip(reference, outputs)):
        if ref.size != out.size:
            return False, None, f"output {i}: shape {list(out.shape)}, onnxruntime has {list(ref.shape)}"
        ref64, out64 = ref.astype(np.float64).ravel(), out.astype(np.float64).ravel()
        if not np.all(np.isfinite(out64) == np.isfinite(ref64)):
            return False, None, f"output {i}: non-finite values where onnxruntime has finite ones"
        finite = np.isfinite(ref64)
        scale = max(float(np.max(np.abs(ref64[finite]), initial=0.0)), 1e-6)
        err = float(np.max(np.abs(out64[finite] - ref64[finite]), initial=0.0)) / scale
        worst = max(worst, err)
    if worst > tolerance:
        return False, worst, f"max |out - ref| / max |ref| = {worst:.2e} > {tolerance:.0e}"
    return True, worst, None


def roofline_ms(entry, machine, output_bytes):
    """max(FLOPs / GEMM peak, compulsory bytes / DRAM bandwidth) in ms; compulsory bytes are the
    parameters, the inputs and the outputs."""
    input_bytes = sum(int(np.prod(i["shape"])) * np.dtype(i["dtype"]).itemsize for i in entry["inputs"])
    compulsory = entry["param_bytes"] + input_bytes + output_bytes
    compute_ms = entry["flops"] / (machine["gemm_peak_gflops"] * 1e9) * 1e3
    memory_ms = compulsory / (machine["dram_bandwidth_gbs"] * 1e9) * 1e3
    llc = last_level_cache_bytes(machine)
    return max(compute_ms, memory_ms), {
        "compulsory_bytes": int(compulsory), "compute_ms": compute_ms, "memory_ms": memory_ms,
        "bound": "compute" if compute_ms >= memory_ms else "memory",
        # Data that fits in the last-level cache can stay there between runs: such a model can
        # beat the DRAM term, and a multiple of the roofline below 1 says exactly that.
        "fits_in_llc": llc is not None and compulsory <= llc}


def last_level_cache_bytes(machine):
    sizes = [str(v) for k, v in machine.get("caches", {}).items() if k.startswith("L3")]
    if not sizes:
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = sizes[0].strip().upper().rstrip("IB").rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)
