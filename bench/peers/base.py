"""The runner interface every runtime implements, and the model files it reads.

A runner is built for one model directory (written by bench/models/export.py: model.onnx,
weights.pt, inputs/*.npy) and a thread count. `load()` compiles or loads the model; its wall
time is the runtime's compile_s. `run()` executes the model once on the prepared inputs and
returns the outputs as numpy arrays (in the ONNX graph's output order); it is what is timed.
A runner that cannot work on this machine raises Unsupported with the reason.
"""
import json
import os
import resource
import time

import numpy as np


class Unsupported(Exception):
    """The runtime cannot run here (not installed, command missing, operator unsupported)."""


class Runner:
    name = "?"

    def __init__(self, model_dir: str, threads: int, options: dict):
        self.model_dir, self.threads, self.options = model_dir, threads, options
        self.onnx_path = os.path.join(model_dir, "model.onnx")
        manifest = json.load(open(os.path.join(os.path.dirname(model_dir), "manifest.json")))
        self.entry = manifest[os.path.basename(model_dir)]
        self.inputs = {i["name"]: np.load(os.path.join(model_dir, "inputs", f"{i['name']}.npy"))
                       for i in self.entry["inputs"]}

    def load(self) -> None:
        raise NotImplementedError

    def run(self) -> list:
        raise NotImplementedError

    def time(self, min_s: float, min_runs: int, warmup: int) -> list:
        """Milliseconds of each timed run: `warmup` untimed runs, then until both minimums hold."""
        for _ in range(warmup):
            self.run()
        times, start = [], time.perf_counter()
        while len(times) < min_runs or time.perf_counter() - start < min_s:
            t0 = time.perf_counter()
            self.run()
            times.append((time.perf_counter() - t0) * 1e3)
        return times

    def peak_rss_mb(self) -> float:
        return own_peak_rss_mb()

    def version(self) -> str:
        return ""


def own_peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM). Not getrusage's ru_maxrss, which on Linux
    keeps the parent's size from before exec."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def torch_module(model_dir: str, entry: dict):
    """Rebuilds the original torch module from the registry and loads the exported weights."""
    import torch
    from bench.models import registry
    spec = registry.get(entry["name"])
    torch.manual_seed(registry.SEED)
    module = spec.build()
    state = torch.load(os.path.join(model_dir, "weights.pt"), map_location="cpu")
    module.load_state_dict(state)
    return module.eval()
