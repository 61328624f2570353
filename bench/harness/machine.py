"""The machine section of a results file: CPU, cores, caches, ISA, and the two numbers the
roofline needs, DRAM bandwidth and fp32 GEMM peak. Both come from `orchid target --json`
(Orchid's own target probe) when that command exists, so Orchid and the harness use one
number; otherwise they are measured here (probe.py, in its own process). Each number
records its source."""
import glob
import json
import os
import platform
import subprocess
import sys

from bench.peers.orchid_runner import orchid_subcommands


def _read(path):
    try:
        return open(path).read().strip()
    except OSError:
        return None


def cpu_facts() -> dict:
    cpuinfo = _read("/proc/cpuinfo") or ""
    field = lambda key: next((l.split(":", 1)[1].strip() for l in cpuinfo.splitlines() if l.startswith(key)), None)
    flags = set((field("flags") or "").split())
    caches = {}
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        level, kind, size = (_read(os.path.join(index, f)) for f in ("level", "type", "size"))
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        caches[name] = size
    isa = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16",
                       "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8") if f in flags]
    return {"cpu_model": field("model name"), "cpu_family_model": f"{field('cpu family')}/{field('model')}",
            "cores": os.cpu_count(), "isa": isa, "caches": caches, "kernel": platform.release(),
            "hypervisor": "hypervisor" in flags, "memory_gb": round(os.sysconf("SC_PAGE_SIZE") *
                                                                      os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


def orchid_target(orchid: str):
    """The parsed `orchid target --json --refresh` (measured now, and cached for Orchid's own
    later use), or None while that command does not exist."""
    if not orchid or not os.access(orchid, os.X_OK) or "target" not in orchid_subcommands(orchid):
        return None
    out = subprocess.run([orchid, "target", "--json", "--refresh"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


def measure(threads: int) -> dict:
    """Runs probe.py in its own process with the bench thread count."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-m", "bench.harness.probe", "--threads", str(threads)],
                         capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"bench.harness.probe failed: {out.stderr[-500:]}")
    return json.loads(out.stdout)


def describe(orchid: str, threads: int) -> dict:
    machine = cpu_facts()
    target = orchid_target(orchid)
    if target is not None:  # its caches and levels stay inside: "caches" keeps the sysfs sizes
        machine["orchid_target"] = target
        for key in ("cpu_model", "cores", "isa"):
            if key in target:
                machine[key] = target[key]
    probe = None
    for key in ("dram_bandwidth_gbs", "gemm_peak_gflops"):
        if target is not None and target.get(key):
            machine[key], machine[key + "_source"] = round(target[key], 2), "orchid target --json --refresh"
        else:
            probe = probe or measure(threads)
            machine[key], machine[key + "_source"] = probe[key], probe[key + "_source"]
            machine.setdefault("probe", probe)
    return machine
