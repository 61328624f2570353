"""Orchid as a torch.compile backend: `torch.compile(module, backend="orchid")`.

For inference on the CPU. Each graph TorchDynamo captures is, on its first call with a given
set of input shapes (and again for each new one), traced into core ATen operators
(functionalized, static shapes), its parameters and buffers folded in as constants, and split
into regions of operators that translate to ONNX (_aten_onnx.py). Each region is compiled by
Orchid into a verified artifact and runs in its place; whatever does not translate runs in
eager PyTorch, with one warning line per operator naming it. Tensors cross into and out of
Orchid through DLPack, without copies.

The backend is registered under the name "orchid" through torch's entry point group
(torch_dynamo_backends, see pyproject.toml) once the package is installed; `register()` does
the same for a package used from a build tree. Options, given as
`torch.compile(..., options={...})`: orchestrate, rewrite, measure, db, cache_dir, tolerance, threads and
seed, as for orchid.compile.
"""

from __future__ import annotations

import operator
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.fx
from torch._decomp import core_aten_decompositions
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from . import CompiledModel, OrchidError
from . import compile as _orchid_compile
from ._aten_onnx import op_name, translate, unsupported_reason, value_of

__all__ = ["orchid_backend", "register", "OrchidFallbackWarning"]

_OPTIONS = ("orchestrate", "rewrite", "measure", "db", "cache_dir", "tolerance", "threads", "seed")

# Operators that only rearrange or relabel a tensor: a region made of these alone stays in
# eager PyTorch, where they cost nothing.
_FREE = {"view.default", "_unsafe_view.default", "reshape.default", "permute.default", "t.default",
         "transpose.int", "expand.default", "squeeze.default", "squeeze.dim", "squeeze.dims",
         "unsqueeze.default", "clone.default", "alias.default", "detach.default", "lift_fresh.default",
         "slice.Tensor", "select.int", "getitem"}


class OrchidFallbackWarning(UserWarning):
    """Part of a graph runs in eager PyTorch instead of Orchid (the message says which and why)."""


def register(name: str = "orchid") -> None:
    """Registers the backend with TorchDynamo under name (an installed package is registered
    through its entry point already)."""
    from torch._dynamo import lookup_backend, register_backend
    try:
        if lookup_backend(name) is orchid_backend:
            return
    except Exception:  # not registered (torch._dynamo.exc.InvalidBackend)
        pass
    register_backend(orchid_backend, name=name)


def orchid_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: Optional[Dict[str, Any]] = None,
                   **more: Any) -> Callable[..., Any]:
    """The backend TorchDynamo calls with each captured graph: returns the callable that runs it.
    options: torch.compile's options (also accepted as keywords)."""
    options = {**(options or {}), **more}
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise OrchidError(f"unknown torch.compile option {unknown[0]!r} for backend 'orchid' "
                          f"(known: {', '.join(_OPTIONS)})")
    return _Graph(gm, example_inputs, options)


def _is_static(t: Any) -> bool:
    """A parameter or buffer of the module, which Dynamo passes as an input marked static."""
    return isinstance(t, torch.nn.Parameter) or getattr(t, "_dynamo_static_input_type", None) is not None


def _version(t: torch.Tensor) -> int:
    try:
        return t._version
    except RuntimeError:  # an inference tensor keeps no version counter, and cannot change in place
        return -1


def _warn(message: str) -> None:
    warnings.warn(message, OrchidFallbackWarning, stacklevel=3)


class _Graph:
    """One captured graph, compiled anew for each input signature (shapes, dtypes, scalar
    arguments, and the identity and version of each parameter and buffer)."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: Dict[str, Any]) -> None:
        self.gm = gm
        self.static = [_is_static(t) for t in example_inputs]
        self.options = options
        self.programs: Dict[Tuple[Any, ...], torch.fx.GraphModule] = {}
        self.warned: set = set()
        # the regions' artifacts, removed with the graph (their kernels stay loaded)
        self.artifacts = tempfile.TemporaryDirectory(prefix="orchid-torch-")

    def _eager(self, why: str, *args: Any) -> Any:
        if why not in self.warned:
            self.warned.add(why)
            _warn(f"orchid: {why}; this graph runs in eager PyTorch")
        return self.gm(*args)

    def signature(self, args: Sequence[Any]) -> Tuple[Any, ...]:
        key: List[Any] = []
        for a, static in zip(args, self.static):
            if isinstance(a, torch.Tensor):
                key.append((id(a), a.data_ptr(), _version(a)) if static else (tuple(a.shape), a.dtype))
            else:
                key.append(a)
        return tuple(key)

    def __call__(self, *args: Any) -> Any:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return self._eager("Orchid compiles for inference; call the model under torch.no_grad() or "
                               "torch.inference_mode()", *args)
        if any(t.device.type != "cpu" for t in tensors):
            return self._eager("the torch.compile backend runs on the CPU, and an input is on another device", *args)
        key = self.signature(args)
        program = self.programs.get(key)
        if program is None:
            try:
                traced = _trace(self.gm, args)
            except Exception as e:  # an operator that FakeTensor or functionalization cannot trace
                first = str(e).splitlines()[0] if str(e) else ""
                return self._eager(f"tracing into ATen failed ({type(e).__name__}: {first[:200]})", *args)
            mutated = [i for i in _mutated_inputs(traced) if self.static[i]]
            if mutated:  # a buffer the graph updates is state, not a weight: keyed by shape, never folded
                for i in mutated:
                    self.static[i] = False
                key = self.signature(args)
            program = self.programs[key] = _build(traced, args, self.static, Path(self.artifacts.name), self.options)
        return program(*args)


def _decompositions() -> Dict[Any, Callable[..., Any]]:
    """Core ATen's decompositions, less those of operators translated whole (_safe_softmax, whose
    decomposition checks every element where one row maximum suffices)."""
    table = dict(core_aten_decompositions())
    table.pop(torch.ops.aten._safe_softmax.default, None)
    return table


def _trace(gm: torch.fx.GraphModule, args: Sequence[Any]) -> torch.fx.GraphModule:
    """The graph in core ATen operators, functionalized, for these inputs' shapes."""
    with torch.no_grad():
        traced = make_fx(torch.func.functionalize(gm, remove="mutations_and_views"),
                         decomposition_table=_decompositions(), tracing_mode="fake")(*args)
    traced.graph.eliminate_dead_code()
    return traced


def _mutates(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return schema is not None and schema.is_mutable


def _foldable(node: torch.fx.Node) -> bool:
    tags = getattr(node.target, "tags", ())
    return node.op == "call_function" and torch.Tag.nondeterministic_seeded not in tags and not _mutates(node) and \
        not op_name(node).startswith(("empty", "new_empty"))


def _mutated_inputs(traced: torch.fx.GraphModule) -> List[int]:
    """The inputs the graph writes to (functionalization ends it with a copy_ into each)."""
    placeholders = [n for n in traced.graph.nodes if n.op == "placeholder"]
    written = {n.args[0] for n in traced.graph.nodes if n.op == "call_function" and _mutates(n) and n.args}
    return [i for i, p in enumerate(placeholders) if p in written]


def _fold_constants(traced: torch.fx.GraphModule, args: Sequence[Any], static: Sequence[bool]) -> None:
    """Turns the parameters and buffers, and every node computed from constants alone, into
    constants of the module (get_attr nodes), so that regions take them as weights."""
    known: Dict[torch.fx.Node, Any] = {}
    placeholders = [n for n in traced.graph.nodes if n.op == "placeholder"]
    for node, value, is_static in zip(placeholders, args, static):
        if is_static and isinstance(value, torch.Tensor):
            known[node] = value.detach()
    for node in traced.graph.nodes:
        if node.op == "get_attr":
            known[node] = getattr(traced, node.target)
        elif _foldable(node) and all(a in known for a in node.all_input_nodes):
            call_args = torch.fx.node.map_arg(node.args, lambda a: known[a])
            call_kwargs = torch.fx.node.map_arg(node.kwargs, lambda a: known[a])
            with torch.no_grad():
                known[node] = node.target(*call_args, **call_kwargs)
    count = 0
    for node, value in known.items():
        if node.op == "get_attr" or not isinstance(value, torch.Tensor):
            continue
        if all(u in known for u in node.users):
            continue
        name = f"_orchid_constant_{count}"
        count += 1
        traced.register_buffer(name, value, persistent=False)
        with traced.graph.inserting_before(node):
            attr = traced.graph.get_attr(name)
        attr.meta = dict(node.meta)
        node.replace_all_uses_with(attr)
    traced.graph.eliminate_dead_code()
    traced.recompile()


class _Support(OperatorSupportBase):
    """The nodes a region may hold; records why the others may not."""

    def __init__(self) -> None:
        self.refused: Dict[str, str] = {}

    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        why = unsupported_reason(node)
        if why is not None:
            source = node.args[0] if node.target is operator.getitem else None
            name = f"output {node.args[1]} of {source.target}" if isinstance(source, torch.fx.Node) else str(node.target)
            self.refused.setdefault(name, why)
        return why is None


class _Region(torch.nn.Module):
    """A region compiled by Orchid, in place of its FX submodule: torch tensors in and out
    through DLPack; constants it took as weights are not passed."""

    def __init__(self, model: CompiledModel, tuple_output: bool) -> None:
        super().__init__()
        self.model = model
        self.tuple_output = tuple_output

    def forward(self, *tensors: torch.Tensor) -> Any:
        arrays = [np.from_dlpack(t.detach().contiguous()) for t in tensors]
        outputs = self.model(*arrays)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        results = tuple(torch.from_dlpack(o) for o in outputs)
        return results if self.tuple_output else results[0]


def _compile_region(parent: torch.fx.GraphModule, call: torch.fx.Node, out: Path, options: Dict[str, Any]) -> None:
    """Compiles the submodule `call` calls into an Orchid region; constants among its inputs
    become the model's weights, and the call passes only the others."""
    sub: torch.fx.GraphModule = getattr(parent, call.target)
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    constants: Dict[str, torch.Tensor] = {}
    dynamic: List[Any] = []
    for ph, arg in zip(placeholders, call.args):
        if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
            constants[ph.name] = getattr(parent, arg.target)
        else:
            dynamic.append(arg)
    ops = sorted({op_name(n) for n in sub.graph.nodes if n.op == "call_function"})
    try:
        model = translate(sub.graph, constants, f"torch_{call.target}")
        compiled = _orchid_compile(model, out, **options)
    except (OrchidError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        _warn(f"orchid: a region of {len(ops)} operator kinds ({', '.join(ops[:6])}) did not compile: {first}; "
              "it runs in eager PyTorch")
        return
    output = next(n for n in sub.graph.nodes if n.op == "output")
    setattr(parent, call.target, _Region(compiled, isinstance(output.args[0], (tuple, list))))
    call.args = tuple(dynamic)


def _build(traced: torch.fx.GraphModule, args: Sequence[Any], static: Sequence[bool], artifacts: Path,
           options: Dict[str, Any]) -> torch.fx.GraphModule:
    """The traced graph with its constants folded and its translatable regions compiled by Orchid
    into new directories under `artifacts`."""
    _fold_constants(traced, args, static)
    support = _Support()
    partitioner = CapabilityBasedPartitioner(traced, support, allows_single_node_partition=True)
    partitions = [p for p in partitioner.propose_partitions()
                  if any(op_name(n) not in _FREE for n in p.nodes)]
    for target, why in sorted(support.refused.items()):
        _warn(f"orchid: {target} runs in eager PyTorch ({why})")
    fused = partitioner.fuse_partitions(partitions) if partitions else traced
    for call in [n for n in fused.graph.nodes if n.op == "call_module" and n.target.startswith("fused_")]:
        _compile_region(fused, call, Path(tempfile.mkdtemp(dir=artifacts, prefix="region-")) / "artifact", options)
    fused.graph.lint()
    fused.recompile()
    return fused
