"""PyTorch on the original module: eager, and torch.compile with Inductor (default and
max-autotune). Compilation happens on the first call, so load() makes that call, with an
empty Inductor cache of its own, so compile_s is a cold compile every time."""
import os
import tempfile

import torch

from .base import Runner, Unsupported, torch_module


class TorchEager(Runner):
    name = "torch-eager"
    compile_mode = None

    def load(self):
        torch.set_num_threads(self.threads)
        self.module = torch_module(self.model_dir, self.entry)
        self.args = [torch.from_numpy(self.inputs[i["name"]]) for i in self.entry["inputs"]]
        if self.compile_mode is not None:
            if not hasattr(torch, "compile"):
                raise Unsupported(f"torch {torch.__version__} has no torch.compile")
            self.cache = tempfile.TemporaryDirectory(prefix="bench-inductor-")
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.cache.name
            self.module = torch.compile(self.module, mode=self.compile_mode)
            self.run()  # compiles

    def run(self):
        with torch.inference_mode():
            out = self.module(*self.args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [o.numpy() for o in outs]

    def version(self):
        return torch.__version__


class TorchInductor(TorchEager):
    name = "torch-inductor"
    compile_mode = "default"


class TorchInductorMaxAutotune(TorchEager):
    name = "torch-inductor-max-autotune"
    compile_mode = "max-autotune"
