"""Orchid from Python: compile an ONNX model into a verified artifact, and run it on NumPy arrays.

    import orchid
    model = orchid.compile("model.onnx", "model.orchid")   # compiled, checked, written
    y = model(x)                                            # NumPy in, NumPy out
    outputs = model.run({"x": x})                           # by input name
    print(model.report)                                     # what was built, and how it was checked
    same = orchid.load("model.orchid")                      # an artifact compiled earlier

Errors of the compiler and the runtime arrive as OrchidError with Orchid's message.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from ._orchid import Artifact as _Artifact
from ._orchid import OrchidError
from ._orchid import compile as _compile

__all__ = ["OrchidError", "TensorSpec", "CompiledModel", "compile", "load"]

PathLike = Union[str, "os.PathLike[str]"]


class TensorSpec(NamedTuple):
    """An input or output of a compiled model: its name, Orchid dtype ("f32", "i64", ...) and shape."""

    name: str
    dtype: str
    shape: tuple


class CompiledModel:
    """An artifact directory (`orchid compile`'s output) and, once first run, the model loaded from it.

    Calling it runs the model on the CPU: positional NumPy arrays (or anything np.asarray takes) in
    input order, converted to each input's dtype where that is lossless. Tensors of other libraries
    that speak DLPack (torch, JAX, ...) are read in place, without a copy, when they are in host
    memory, of the input's dtype and C-contiguous. The outputs come back as new NumPy arrays (64-byte
    aligned; torch.from_dlpack takes them without a copy), one array when the model has one output,
    else a tuple.
    """

    def __init__(self, path: PathLike, compile_summary: str = "", threads: Optional[int] = None) -> None:
        self.path = Path(path)
        self.compile_summary = compile_summary
        self._threads = threads
        self._artifact: Optional[_Artifact] = None

    def _loaded(self) -> _Artifact:
        if self._artifact is None:
            self._artifact = _Artifact(str(self.path), _default_threads(self._threads))
            # (name, Orchid dtype, shape, NumPy dtype or None), read once
            self._in, self._out = self._artifact.inputs(), self._artifact.outputs()
        return self._artifact

    @property
    def threads(self) -> int:
        """The threads the model's kernels run on."""
        return self._loaded().threads()

    @property
    def inputs(self) -> list[TensorSpec]:
        """The inputs, in the order calls pass them."""
        self._loaded()
        return [TensorSpec(n, t, tuple(s)) for n, t, s, _ in self._in]

    @property
    def outputs(self) -> list[TensorSpec]:
        """The outputs, in the order calls return them."""
        self._loaded()
        return [TensorSpec(n, t, tuple(s)) for n, t, s, _ in self._out]

    @property
    def report(self) -> str:
        """The artifact's report.md: steps, stages, verification."""
        return (self.path / "report.md").read_text()

    def __call__(self, *arrays: Any) -> Union[np.ndarray, tuple]:
        artifact = self._loaded()
        if len(arrays) != len(self._in):
            names = ", ".join(s[0] for s in self._in)
            raise OrchidError(f"{len(self._in)} inputs expected ({names}), got {len(arrays)}")
        outputs = artifact.run([_as_input(a, s) for a, s in zip(arrays, self._in)])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Runs on inputs by name; returns the outputs by name."""
        artifact = self._loaded()
        names = [s[0] for s in self._in]
        unknown = sorted(set(feeds) - set(names))
        if unknown:
            raise OrchidError(f"unknown input {unknown[0]!r} (the inputs are {', '.join(names)})")
        missing = [n for n in names if n not in feeds]
        if missing:
            raise OrchidError(f"input {missing[0]!r} is missing")
        outputs = artifact.run([_as_input(feeds[s[0]], s) for s in self._in])
        return {s[0]: o for s, o in zip(self._out, outputs)}

    def __repr__(self) -> str:
        return f"CompiledModel({str(self.path)!r})"


def _default_threads(threads: Optional[int]) -> int:
    """The threads asked for; else, inside a process that has imported torch, torch's intra-op
    thread count (so that the two do not oversubscribe the cores); else 0, OpenMP's default."""
    if threads is not None:
        return threads
    torch = sys.modules.get("torch")
    get = getattr(torch, "get_num_threads", None)
    return int(get()) if callable(get) else 0


def _as_input(value: Any, spec: tuple) -> np.ndarray:
    """The value as a C-contiguous array of the input's dtype (spec: the extension's
    (name, Orchid dtype, shape, NumPy dtype or None)): converted only where no value changes
    (np.can_cast 'safe', or a Python scalar or list); the shape is checked by the runtime."""
    name, dtype, _, want = spec
    if want is None:
        raise OrchidError(f"input {name!r} is {dtype}, which NumPy has no type for")
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        value = _from_dlpack(value, name)
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype != want:
        if isinstance(value, np.ndarray) and not np.can_cast(array.dtype, want, casting="safe"):
            raise OrchidError(f"input {name!r} must be {dtype}, got {array.dtype} (converting would change values)")
        array = array.astype(want)
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)  # (which makes 0-d arrays 1-d)


def _from_dlpack(value: Any, name: str) -> np.ndarray:
    """A tensor of another library (torch, JAX, CuPy, ...) seen as a NumPy array through DLPack,
    sharing its memory."""
    try:
        return np.from_dlpack(value)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise OrchidError(f"input {name!r}: {type(value).__name__} cannot be read through DLPack in host memory: {e}") \
            from None


def compile(model: Union[PathLike, bytes, Any], output: Optional[PathLike] = None, *, target: str = "cpu",
            shapes: Optional[Mapping[str, Sequence[int]]] = None, orchestrate: Optional[str] = None, rewrite: bool = True,
            measure: bool = True, db: Optional[PathLike] = None, cache_dir: Optional[PathLike] = None, seed: int = 1,
            tolerance: Optional[float] = None, threads: Optional[int] = None,
            gpu: Optional[str] = None, precision: str = "fp32") -> CompiledModel:
    """Compiles an ONNX model into an artifact directory, checked against Orchid's reference interpreter.

    model: a path to an .onnx file, its bytes, or an onnx.ModelProto (anything with SerializeToString).
    output: the artifact directory to write (default: a new temporary directory).
    target: "cpu" (this machine) or "cuda" (NVIDIA GPUs; runs through `orchid run` for now).
    shapes: the dims of inputs that have dynamic ones, by input name ({"x": (1, 3, 224, 224)}).
    orchestrate: "optimal" (the BLP over every convex kernel, with measured costs), "greedy" (fusion rules),
    "per-op" or "primitive"; default: optimal for target "cpu" when measuring, else greedy.
    rewrite: run the rewrite search.
    measure: choose between oneDNN (and its Winograd convolutions) and generated code by timing them, as `orchid compile` does (the
    `orchid` program installed with the package runs the candidates); False prefers oneDNN.
    db: the tuning database those times are kept in (default: tuning.db in Orchid's cache).
    cache_dir: Orchid's cache (default ~/.cache/orchid).
    seed, tolerance: of the verification (tolerance default: 1e-4 relative L2 error per f32 output;
    by the precision otherwise: 1e-2 for tf32 and fp16, 5e-2 for bf16).
    threads: the threads the compiled model runs on (default: torch's intra-op count where torch
    is imported, else OpenMP's default).
    gpu: for target "cuda", the GPU the schedules are for: "a100", "a100-40gb", "h100" or "h200"
    (default: the GPU present, measured, else the H100's datasheet figures).
    precision: "fp32" (default); for target "cuda" also "tf32" (cuBLASLt and cuDNN on TF32 tensor
    cores), "fp16" or "bf16" (the model's values stored in that dtype, products on tensor cores with
    f32 accumulation, arithmetic in f32; inputs and outputs stay f32).
    Raises OrchidError for a model Orchid cannot read or compile, or an artifact that does not match.
    """
    dims = {str(k): [int(d) for d in v] for k, v in (shapes or {}).items()}
    program = _orchid_program() if measure else None
    with tempfile.TemporaryDirectory(prefix="orchid-model-") as scratch:
        path = _model_path(model, scratch)
        out = Path(output) if output is not None else Path(tempfile.mkdtemp(prefix="orchid-")) / "artifact"
        result = _compile(str(path), str(out), target, orchestrate or "", rewrite, str(cache_dir or ""), seed, tolerance,
                          dims, str(program or ""), str(db or ""), str(gpu or ""), precision)
    return CompiledModel(result["path"], result["summary"] + result["verification"], threads)


def _orchid_program() -> Optional[Path]:
    """The `orchid` program of this package: installed beside it (orchid/bin), or, for the package
    in a build tree (<build>/python/orchid), the build's tools/orchid/orchid."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "bin" / "orchid", here.parent.parent / "tools" / "orchid" / "orchid"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def load(path: PathLike, threads: Optional[int] = None) -> CompiledModel:
    """An artifact directory compiled earlier (by orchid.compile or `orchid compile`); threads as
    for compile."""
    model = CompiledModel(path, threads=threads)
    model._loaded()
    return model


def _model_path(model: Any, scratch: str) -> Path:
    if isinstance(model, (str, os.PathLike)):
        return Path(model)
    data = model if isinstance(model, (bytes, bytearray)) else getattr(model, "SerializeToString", None)
    if callable(data):
        data = data()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("model must be a path, bytes or an onnx.ModelProto")
    path = Path(scratch) / "model.onnx"
    path.write_bytes(bytes(data))
    return path
