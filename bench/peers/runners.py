"""The runtime names the harness knows, each mapped to its runner class (imported lazily, so a
peer that is not installed fails alone, as "unsupported")."""
import importlib

from .base import Unsupported

_CLASSES = {
    "onnxruntime": ("onnxruntime_runner", "OnnxRuntime"),
    "openvino": ("openvino_runner", "OpenVino"),
    "torch-eager": ("torch_runner", "TorchEager"),
    "torch-inductor": ("torch_runner", "TorchInductor"),
    "torch-inductor-max-autotune": ("torch_runner", "TorchInductorMaxAutotune"),
    "torch-orchid": ("torch_runner", "TorchOrchid"),
    "tvm": ("tvm_runner", "Tvm"),
    "orchid-per-op": ("orchid_runner", "OrchidPerOp"),
    "orchid-greedy": ("orchid_runner", "OrchidGreedy"),
    "orchid-optimal": ("orchid_runner", "OrchidOptimal"),
    "orchid-superopt": ("orchid_runner", "OrchidSuperopt"),
    "orchid-tuned": ("orchid_runner", "OrchidTuned"),
}


def _factory(module, cls):
    def make(*args):
        try:
            m = importlib.import_module(f"bench.peers.{module}")
        except ImportError as e:
            raise Unsupported(f"not installed in the bench venv: {e}")
        return getattr(m, cls)(*args)
    return make


RUNNERS = {name: _factory(*where) for name, where in _CLASSES.items()}
ORCHID = [n for n in _CLASSES if n.startswith("orchid-") or n == "torch-orchid"]
PEERS = [n for n in _CLASSES if n not in ORCHID]
# Minutes of tuning per model: asked for by name, not run by default.
OPT_IN = ["orchid-tuned"]
