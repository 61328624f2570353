"""PyTorch on the original module: eager, torch.compile with Inductor (default and
max-autotune), and torch.compile with Orchid's backend (backend="orchid"). Compilation happens
on the first call, so load() makes that call; Inductor gets an empty cache of its own, so its
compile_s is a cold compile every time. Orchid's backend is the package built beside the orchid
binary (<build>/python) and uses Orchid's own cache, as a user's would."""
import os
import sys
import tempfile

import torch

from .base import Runner, Unsupported, torch_module


class TorchEager(Runner):
    name = "torch-eager"
    compile_mode = None

    def load(self):
        torch.set_num_threads(self.threads)
        # Inputs in memory torch allocates (64-byte aligned), as a model's own tensors are: a
        # NumPy array's data may be aligned to 16 bytes only, which Orchid's runtime copies
        # (kernel_abi.h) and torch does not mind.
        self.args = [torch.from_numpy(self.inputs[i["name"]]).clone() for i in self.entry["inputs"]]
        module = torch_module(self.model_dir, self.entry)
        self.module = self.compiled(module)
        if self.module is not module:
            self.run()  # compiles

    def compiled(self, module):
        """The module as torch.compile makes it (itself, for eager)."""
        if self.compile_mode is None:
            return module
        if not hasattr(torch, "compile"):
            raise Unsupported(f"torch {torch.__version__} has no torch.compile")
        self.cache = tempfile.TemporaryDirectory(prefix="bench-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.cache.name
        return torch.compile(module, mode=self.compile_mode)

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


class TorchOrchid(TorchEager):
    """torch.compile(module, backend="orchid"): the package from the build that holds --orchid."""
    name = "torch-orchid"

    def compiled(self, module):
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(self.options["orchid"]))))
        package = os.path.join(build, "python")
        if not os.path.isdir(os.path.join(package, "orchid")):
            raise Unsupported(f"no orchid Python package at {package} (built with Python headers and pybind11)")
        sys.path.insert(0, package)  # its dist-info names the backend's entry point
        return torch.compile(module, backend="orchid")

    def version(self):
        return f"torch {torch.__version__}"
