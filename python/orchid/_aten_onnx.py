"""ATen graphs to ONNX, for the torch.compile backend (torch_backend.py).

A graph traced by make_fx into core ATen operators (functionalized, with static shapes) is
translated node by node into an ONNX graph of opset 17, the opset Orchid reads.
`unsupported_reason(node)` says why a node cannot be translated (None when it can); `translate(...)` builds the ONNX model of a region of
supported nodes. Shapes, dtypes and Python-scalar promotion are taken from each node's traced
value (node.meta["val"]), so every Reshape, Expand and Cast has its exact static form.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OPSET = 17

# The element types a translated region may compute in, with their ONNX and NumPy types. Not
# float16: ATen keeps a Python scalar in float32 next to a float16 tensor, where a constant of
# the tensor's type would round it (1e5 to inf).
DTYPES: Dict[torch.dtype, Tuple[int, Any]] = {
    torch.float32: (TensorProto.FLOAT, np.float32),
    torch.float64: (TensorProto.DOUBLE, np.float64),
    torch.int64: (TensorProto.INT64, np.int64),
    torch.int32: (TensorProto.INT32, np.int32),
    torch.int8: (TensorProto.INT8, np.int8),
    torch.uint8: (TensorProto.UINT8, np.uint8),
    torch.bool: (TensorProto.BOOL, np.bool_),
}


def op_name(node: torch.fx.Node) -> str:
    """The table's name of a node's operator: "add.Tensor" for aten.add.Tensor; the functional
    copies of views (view_copy, permute_copy, ...) under their view's name; "getitem"."""
    if node.target is operator.getitem:
        return "getitem"
    overload = getattr(node.target, "_overloadname", None)
    packet = getattr(getattr(node.target, "overloadpacket", None), "__name__", None)
    if overload is None or packet is None:
        return str(node.target)
    if packet.endswith("_copy") and packet != "_to_copy":
        packet = packet[: -len("_copy")]
    return f"{packet}.{overload}"


def value_of(node: Any) -> Any:
    """The traced value (a FakeTensor or tuple of them) of an FX node; None for other args."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _tensor_ok(v: Any) -> bool:
    return isinstance(v, torch.Tensor) and v.dtype in DTYPES and v.numel() > 0 and \
        all(isinstance(d, int) for d in v.shape)


def _norm(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def _per_dim(v: Any, spatial: int, default: int) -> List[int]:
    """A size, stride or padding argument given for every spatial dim: ATen may give one value
    for all of them, or none (the default)."""
    v = [default] if v is None or (isinstance(v, (list, tuple)) and len(v) == 0) else v
    v = [v] if isinstance(v, int) else list(v)
    return v * spatial if len(v) == 1 else v


class Builder:
    """The ONNX graph under construction: nodes, initializers, and each FX node's ONNX names."""

    def __init__(self) -> None:
        self.nodes: List[onnx.NodeProto] = []
        self.initializers: List[onnx.TensorProto] = []
        self.names: Dict[torch.fx.Node, List[str]] = {}
        self.known: Dict[torch.fx.Node, torch.Tensor] = {}  # the nodes that are constants, and their values
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"t{self._count}_{hint}"

    def op(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> Any:
        """Adds a node; returns its output name, or the list of names when outputs > 1."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=names[0],
                                           **{k: v for k, v in attrs.items() if v is not None}))
        return names[0] if outputs == 1 else names

    def const(self, array: np.ndarray, hint: str = "c") -> str:
        name = self.fresh(hint)
        # (np.ascontiguousarray would make a zero-dimensional array one-dimensional)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C", copy=True), name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), "ints")

    def scalar(self, value: Any, dtype: torch.dtype) -> str:
        return self.const(np.asarray(value, dtype=DTYPES[dtype][1]), "s")

    def value(self, arg: Any, dtype: Optional[torch.dtype] = None) -> str:
        """An argument's ONNX name: a node's (first) output, cast to dtype where given and
        different; a Python number as a scalar constant of dtype."""
        if isinstance(arg, torch.fx.Node):
            name = self.names[arg][0]
            have = value_of(arg).dtype
            if dtype is not None and have != dtype:
                return self.op("Cast", [name], to=DTYPES[dtype][0])
            return name
        if dtype is None:
            raise TypeError(f"a constant {arg!r} without a type")
        return self.scalar(arg, dtype)


def _operand(arg: Any) -> Any:
    """An operand as torch.result_type sees it: a tensor of the same dtype and rank class
    (zero-dimensional or not), or the Python scalar itself."""
    v = value_of(arg)
    if v is None:
        return arg
    return torch.empty((0,) if v.dim() else (), dtype=v.dtype)


def _promoted(a: Any, b: Any) -> torch.dtype:
    return torch.result_type(_operand(a), _operand(b))


Translation = Callable[[Builder, torch.fx.Node], Any]
TABLE: Dict[str, Translation] = {}


def _rule(*names: str) -> Callable[[Translation], Translation]:
    def register(fn: Translation) -> Translation:
        for n in names:
            TABLE[n] = fn
        return fn
    return register


def _binary(onnx_op: str) -> Translation:
    def fn(b: Builder, node: torch.fx.Node) -> str:
        x, y = node.args[0], node.args[1]
        dtype = value_of(node).dtype
        yv = b.value(y, dtype)
        alpha = node.args[2] if len(node.args) > 2 else node.kwargs.get("alpha", 1)  # positional in the .Scalar forms
        if alpha != 1:
            yv = b.op("Mul", [yv, b.scalar(alpha, dtype)])
        return b.op(onnx_op, [b.value(x, dtype), yv])
    return fn


for _name, _op in [("add.Tensor", "Add"), ("add.Scalar", "Add"), ("sub.Tensor", "Sub"), ("sub.Scalar", "Sub"),
                   ("mul.Tensor", "Mul"), ("mul.Scalar", "Mul"), ("div.Tensor", "Div"), ("div.Scalar", "Div"),
                   ("maximum.default", "Max"), ("minimum.default", "Min"), ("pow.Tensor_Scalar", "Pow"),
                   ("pow.Tensor_Tensor", "Pow")]:
    TABLE[_name] = _binary(_op)


def _compare(onnx_op: str, negate: bool = False) -> Translation:
    def fn(b: Builder, node: torch.fx.Node) -> str:
        x, y = node.args[0], node.args[1]
        dtype = _promoted(x, y)
        r = b.op(onnx_op, [b.value(x, dtype), b.value(y, dtype)])
        return b.op("Not", [r]) if negate else r
    return fn


for _kind, _op, _neg in [("eq", "Equal", False), ("ne", "Equal", True), ("lt", "Less", False),
                         ("le", "LessOrEqual", False), ("gt", "Greater", False), ("ge", "GreaterOrEqual", False)]:
    TABLE[f"{_kind}.Tensor"] = TABLE[f"{_kind}.Scalar"] = _compare(_op, _neg)


def _unary(onnx_op: str, **attrs: Any) -> Translation:
    def fn(b: Builder, node: torch.fx.Node) -> str:
        return b.op(onnx_op, [b.value(node.args[0], value_of(node).dtype)], **attrs)
    return fn


for _name, _op in [("relu", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"), ("exp", "Exp"), ("log", "Log"),
                   ("sqrt", "Sqrt"), ("neg", "Neg"), ("abs", "Abs"), ("erf", "Erf"), ("reciprocal", "Reciprocal"),
                   ("sin", "Sin"), ("cos", "Cos"), ("floor", "Floor"), ("ceil", "Ceil"), ("sign", "Sign"),
                   ("hardswish", "HardSwish"), ("clone", "Identity"), ("alias", "Identity"),
                   ("lift_fresh", "Identity"), ("detach", "Identity")]:
    TABLE[f"{_name}.default"] = _unary(_op)
TABLE["hardsigmoid.default"] = _unary("HardSigmoid", alpha=1.0 / 6, beta=0.5)


@_rule("logical_not.default")
def _logical_not(b: Builder, node: torch.fx.Node) -> str:
    return b.op("Not", [b.value(node.args[0], torch.bool)])


@_rule("logical_and.default", "logical_or.default")
def _logical(b: Builder, node: torch.fx.Node) -> str:
    op = "And" if op_name(node).startswith("logical_and") else "Or"
    return b.op(op, [b.value(node.args[0], torch.bool), b.value(node.args[1], torch.bool)])


@_rule("rsqrt.default")
def _rsqrt(b: Builder, node: torch.fx.Node) -> str:
    return b.op("Reciprocal", [b.op("Sqrt", [b.value(node.args[0], value_of(node).dtype)])])


@_rule("silu.default")
def _silu(b: Builder, node: torch.fx.Node) -> str:
    x = b.value(node.args[0], value_of(node).dtype)
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


@_rule("gelu.default")
def _gelu(b: Builder, node: torch.fx.Node) -> str:
    dtype = value_of(node).dtype
    x = b.value(node.args[0], dtype)
    if node.kwargs.get("approximate", "none") == "tanh":
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.scalar(0.044715, dtype)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.scalar(math.sqrt(2 / math.pi), dtype)])])
    else:
        t = b.op("Erf", [b.op("Mul", [x, b.scalar(1 / math.sqrt(2), dtype)])])
    half = b.op("Mul", [x, b.scalar(0.5, dtype)])
    return b.op("Mul", [half, b.op("Add", [t, b.scalar(1.0, dtype)])])


@_rule("leaky_relu.default")
def _leaky_relu(b: Builder, node: torch.fx.Node) -> str:
    slope = node.args[1] if len(node.args) > 1 else 0.01
    return b.op("LeakyRelu", [b.value(node.args[0])], alpha=float(slope))


@_rule("hardtanh.default", "clamp.default", "clamp_min.default", "clamp_max.default")
def _clip(b: Builder, node: torch.fx.Node) -> str:
    name, dtype = op_name(node), value_of(node).dtype
    args = list(node.args[1:]) + [None, None]
    if name == "hardtanh.default":
        low, high = (node.args[1] if len(node.args) > 1 else -1.0), (node.args[2] if len(node.args) > 2 else 1.0)
    elif name == "clamp_min.default":
        low, high = args[0], None
    elif name == "clamp_max.default":
        low, high = None, args[0]
    else:
        low, high = node.kwargs.get("min", args[0]), node.kwargs.get("max", args[1])
    bounds = ["" if v is None else b.scalar(v, dtype) for v in (low, high)]
    return b.op("Clip", [b.value(node.args[0], dtype)] + bounds)


@_rule("full_like.default", "zeros_like.default", "ones_like.default")
def _full_like(b: Builder, node: torch.fx.Node) -> str:
    name = op_name(node)
    fill = 0 if name.startswith("zeros") else 1 if name.startswith("ones") else node.args[1]
    v = value_of(node)
    return b.const(np.full(list(v.shape), fill, dtype=DTYPES[v.dtype][1]), "full")


@_rule("where.self")
def _where(b: Builder, node: torch.fx.Node) -> str:
    dtype = value_of(node).dtype
    return b.op("Where", [b.value(node.args[0], torch.bool), b.value(node.args[1], dtype), b.value(node.args[2], dtype)])


@_rule("fmod.Scalar", "fmod.Tensor")
def _fmod(b: Builder, node: torch.fx.Node) -> str:
    dtype = value_of(node).dtype
    return b.op("Mod", [b.value(node.args[0], dtype), b.value(node.args[1], dtype)], fmod=1)


@_rule("_softmax.default", "_log_softmax.default")
def _softmax(b: Builder, node: torch.fx.Node) -> str:
    op = "Softmax" if op_name(node).startswith("_softmax") else "LogSoftmax"
    return b.op(op, [b.value(node.args[0], value_of(node).dtype)], axis=int(node.args[1]))


@_rule("_safe_softmax.default")
def _safe_softmax(b: Builder, node: torch.fx.Node) -> str:
    """Softmax, but 0 on a row that is -inf throughout (a fully masked attention row): the row's
    max tells, so the guard costs one reduction, not the elementwise compare and any() that
    ATen's decomposition spells out."""
    dtype = value_of(node).dtype
    x = b.value(node.args[0], dtype)
    axis = int(node.args[1])
    soft = b.op("Softmax", [x], axis=axis)
    dead = b.op("Equal", [b.op("ReduceMax", [x], axes=[axis], keepdims=1), b.scalar(float("-inf"), dtype)])
    return b.op("Where", [dead, b.scalar(0.0, dtype), soft])


@_rule("_to_copy.default")
def _to_copy(b: Builder, node: torch.fx.Node) -> str:
    return b.value(node.args[0], value_of(node).dtype) if value_of(node.args[0]).dtype != value_of(node).dtype \
        else b.op("Identity", [b.value(node.args[0])])


# Every view that changes only the shape becomes a Reshape to the traced shape.
@_rule("view.default", "_unsafe_view.default", "reshape.default", "squeeze.default", "squeeze.dim",
       "squeeze.dims", "unsqueeze.default", "flatten.using_ints")
def _reshape(b: Builder, node: torch.fx.Node) -> str:
    return b.op("Reshape", [b.value(node.args[0]), b.ints(value_of(node).shape)])


@_rule("permute.default")
def _permute(b: Builder, node: torch.fx.Node) -> str:
    rank = value_of(node).dim()
    return b.op("Transpose", [b.value(node.args[0])], perm=[_norm(d, rank) for d in node.args[1]])


@_rule("t.default", "transpose.int")
def _transpose(b: Builder, node: torch.fx.Node) -> str:
    rank = value_of(node).dim()
    perm = list(range(rank))
    if op_name(node) == "t.default":
        perm.reverse()
    else:
        d0, d1 = _norm(node.args[1], rank), _norm(node.args[2], rank)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op("Transpose", [b.value(node.args[0])], perm=perm)


@_rule("expand.default")
def _expand(b: Builder, node: torch.fx.Node) -> str:
    return b.op("Expand", [b.value(node.args[0]), b.ints(value_of(node).shape)])


@_rule("repeat.default")
def _repeat(b: Builder, node: torch.fx.Node) -> str:
    repeats = list(node.args[1])
    x = b.value(node.args[0])
    shape = list(value_of(node.args[0]).shape)
    if len(repeats) > len(shape):
        x = b.op("Reshape", [x, b.ints([1] * (len(repeats) - len(shape)) + shape)])
    return b.op("Tile", [x, b.ints(repeats)])


@_rule("slice.Tensor")
def _slice(b: Builder, node: torch.fx.Node) -> str:
    args = list(node.args) + [None] * 5
    dim, start, end, step = (args[1] or 0), args[2], args[3], (args[4] or 1)
    size = value_of(node.args[0]).shape[dim]
    start = 0 if start is None else max(-size, min(size, start))
    end = size if end is None else max(-size, min(size, end))
    return b.op("Slice", [b.value(node.args[0]), b.ints([start]), b.ints([end]),
                          b.ints([_norm(dim, value_of(node.args[0]).dim())]), b.ints([step])])


@_rule("select.int")
def _select(b: Builder, node: torch.fx.Node) -> str:
    x, dim, index = node.args[0], node.args[1], node.args[2]
    rank, size = value_of(x).dim(), value_of(x).shape[node.args[1]]
    return b.op("Gather", [b.value(x), b.const(np.asarray(_norm(index, size), dtype=np.int64))], axis=_norm(dim, rank))


@_rule("index_select.default")
def _index_select(b: Builder, node: torch.fx.Node) -> str:
    x, index = node.args[0], b.value(node.args[2])
    if value_of(node.args[2]).dim() == 0:  # the dim stays, of size 1, unlike a Gather by a scalar
        index = b.op("Reshape", [index, b.ints([1])])
    return b.op("Gather", [b.value(x), index], axis=_norm(node.args[1], value_of(x).dim()))


@_rule("embedding.default")
def _embedding(b: Builder, node: torch.fx.Node) -> str:
    return b.op("Gather", [b.value(node.args[0]), b.value(node.args[1])], axis=0)


def _indexed_dims(node: torch.fx.Node) -> List[int]:
    return [i for i, t in enumerate(node.args[1]) if t is not None]


@_rule("index.Tensor")
def _index(b: Builder, node: torch.fx.Node) -> str:
    """x[..., i, ...] by one index tensor: a Gather (negative indices count from the end; one out
    of range is an error of Orchid's run-time check). By several, on adjacent dims k..k+m-1, as
    torch broadcasts them: they must be constants, checked here and merged into one flat index
    into those dims merged into one."""
    x, indices = node.args[0], list(node.args[1])
    dims = _indexed_dims(node)
    shape = list(value_of(x).shape)
    if len(dims) == 1:
        return b.op("Gather", [b.value(x), b.value(indices[dims[0]])], axis=dims[0])
    k, m = dims[0], len(dims)
    arrays = np.broadcast_arrays(*[b.known[indices[d]].numpy().astype(np.int64) for d in dims])
    flat = np.zeros(arrays[0].shape, dtype=np.int64)
    for d, index in zip(dims, arrays):
        if ((index < -shape[d]) | (index >= shape[d])).any():
            raise ValueError(f"an index of {node.name} is out of range for dim {d} of size {shape[d]}")
        flat = flat * shape[d] + np.where(index < 0, index + shape[d], index)
    merged = shape[:k] + [int(np.prod(shape[k:k + m]))] + shape[k + m:]
    return b.op("Gather", [b.op("Reshape", [b.value(x), b.ints(merged)]), b.const(flat, "index")], axis=k)


@_rule("split_with_sizes.default", "split.Tensor", "unbind.int")
def _split(b: Builder, node: torch.fx.Node) -> List[str]:
    x, unbind = node.args[0], op_name(node) == "unbind.int"
    at = 1 if unbind else 2  # the dim's position: unbind(x, dim), split(x, sizes, dim)
    dim = _norm(node.args[at] if len(node.args) > at else node.kwargs.get("dim", 0), value_of(x).dim())
    outputs = list(value_of(node))
    sizes = [o.shape[dim] if not unbind else 1 for o in outputs]
    parts = b.op("Split", [b.value(x), b.ints(sizes)], outputs=len(sizes), axis=dim)
    parts = parts if isinstance(parts, list) else [parts]
    if unbind:
        parts = [b.op("Reshape", [p, b.ints(o.shape)]) for p, o in zip(parts, outputs)]
    return parts


@_rule("cat.default")
def _cat(b: Builder, node: torch.fx.Node) -> str:
    dtype, rank = value_of(node).dtype, value_of(node).dim()
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    parts = [b.value(t, dtype) for t in node.args[0] if value_of(t).numel() > 0]
    return b.op("Concat", parts, axis=_norm(dim, rank))


def _reduce_axes(node: torch.fx.Node) -> List[int]:
    rank = value_of(node.args[0]).dim()
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted(_norm(d, rank) for d in dims)


def _keepdim(node: torch.fx.Node) -> int:
    return int(bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)))


@_rule("sum.dim_IntList", "mean.dim", "amax.default", "amin.default")
def _reduce(b: Builder, node: torch.fx.Node) -> str:
    op = {"sum": "ReduceSum", "mean": "ReduceMean", "amax": "ReduceMax", "amin": "ReduceMin"}[op_name(node).split(".")[0]]
    x = b.value(node.args[0], value_of(node).dtype)
    if op == "ReduceSum":  # its axes are an input from opset 13 on
        return b.op(op, [x, b.ints(_reduce_axes(node))], keepdims=_keepdim(node))
    return b.op(op, [x], axes=_reduce_axes(node), keepdims=_keepdim(node))


@_rule("any.dim", "any.dims")
def _any(b: Builder, node: torch.fx.Node) -> str:
    nonzero = b.op("Cast", [b.value(node.args[0], torch.bool)], to=TensorProto.INT32)
    r = b.op("ReduceMax", [nonzero], axes=_reduce_axes(node), keepdims=_keepdim(node))
    return b.op("Cast", [r], to=TensorProto.BOOL)


@_rule("argmax.default", "argmin.default")
def _argmax(b: Builder, node: torch.fx.Node) -> str:
    op = "ArgMax" if op_name(node).startswith("argmax") else "ArgMin"
    x = b.value(node.args[0])
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if dim is None:
        return b.op("Reshape", [b.op(op, [b.op("Reshape", [x, b.ints([-1])])], axis=0, keepdims=0),
                                b.ints(value_of(node).shape)])
    return b.op(op, [x], axis=_norm(dim, value_of(node.args[0]).dim()), keepdims=_keepdim(node))


@_rule("addmm.default")
def _addmm(b: Builder, node: torch.fx.Node) -> str:
    bias, m1, m2 = node.args[:3]
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    return b.op("Gemm", [b.value(m1), b.value(m2), b.value(bias)], alpha=float(alpha), beta=float(beta))


@_rule("mm.default", "bmm.default", "matmul.default")
def _matmul(b: Builder, node: torch.fx.Node) -> str:
    return b.op("MatMul", [b.value(node.args[0]), b.value(node.args[1])])


@_rule("convolution.default")
def _convolution(b: Builder, node: torch.fx.Node) -> str:
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = node.args[:9]
    spatial = value_of(w).dim() - 2
    inputs = [b.value(x), b.value(w)] + ([b.value(bias)] if bias is not None else [])
    attrs = dict(strides=_per_dim(stride, spatial, 1), pads=_per_dim(padding, spatial, 0) * 2,
                 dilations=_per_dim(dilation, spatial, 1), group=int(groups), kernel_shape=list(value_of(w).shape[2:]))
    if transposed:
        return b.op("ConvTranspose", inputs, output_padding=_per_dim(output_padding, spatial, 0), **attrs)
    return b.op("Conv", inputs, **attrs)


def _ones_or(b: Builder, arg: Any, shape: Sequence[int], fill: float, dtype: torch.dtype) -> str:
    return b.value(arg) if arg is not None else b.const(np.full(list(shape), fill, dtype=DTYPES[dtype][1]))


def _batch_statistics(b: Builder, node: torch.fx.Node) -> List[str]:
    """Batch normalization over the batch's own statistics (training mode without running
    statistics, as instance normalization decomposes): the mean and biased variance over every
    dim but the channels'."""
    x, weight, bias = node.args[:3]
    eps = node.args[-1]
    shape, dtype = list(value_of(x).shape), value_of(x).dtype
    axes = [d for d in range(len(shape)) if d != 1]
    per_channel = [1, shape[1]] + [1] * (len(shape) - 2)
    xv = b.value(x)
    centered = b.op("Sub", [xv, b.op("ReduceMean", [xv], axes=axes, keepdims=1)])
    var = b.op("ReduceMean", [b.op("Mul", [centered, centered])], axes=axes, keepdims=1)
    y = b.op("Div", [centered, b.op("Sqrt", [b.op("Add", [var, b.scalar(eps, dtype)])])])
    if weight is not None:
        y = b.op("Mul", [y, b.op("Reshape", [b.value(weight), b.ints(per_channel)])])
    if bias is not None:
        y = b.op("Add", [y, b.op("Reshape", [b.value(bias), b.ints(per_channel)])])
    return [y]


@_rule("native_batch_norm.default", "_native_batch_norm_legit_no_training.default")
def _batch_norm(b: Builder, node: torch.fx.Node) -> List[str]:
    x, weight, bias, mean, var = node.args[:5]
    if mean is None:
        return _batch_statistics(b, node)
    eps = node.args[-1]
    channels, dtype = value_of(x).shape[1], value_of(x).dtype
    y = b.op("BatchNormalization", [b.value(x), _ones_or(b, weight, [channels], 1.0, dtype),
                                    _ones_or(b, bias, [channels], 0.0, dtype), b.value(mean), b.value(var)],
             epsilon=float(eps))
    return [y]


@_rule("native_layer_norm.default")
def _layer_norm(b: Builder, node: torch.fx.Node) -> List[str]:
    x, shape, weight, bias, eps = node.args[:5]
    dtype = value_of(x).dtype
    y = b.op("LayerNormalization", [b.value(x), _ones_or(b, weight, shape, 1.0, dtype),
                                    _ones_or(b, bias, shape, 0.0, dtype)], axis=-len(shape), epsilon=float(eps))
    return [y]


def _pool_attrs(kernel: Sequence[int], stride: Sequence[int], padding: Any, dilation: Any = None) -> Dict[str, Any]:
    spatial = len(_per_dim(kernel, 1, 1))
    attrs = dict(kernel_shape=_per_dim(kernel, spatial, 1), pads=_per_dim(padding, spatial, 0) * 2,
                 strides=_per_dim(stride, spatial, 0) if stride else _per_dim(kernel, spatial, 1))
    if dilation is not None:
        attrs["dilations"] = _per_dim(dilation, spatial, 1)
    return attrs


@_rule("max_pool2d_with_indices.default")
def _max_pool(b: Builder, node: torch.fx.Node) -> List[str]:
    args = list(node.args) + [None] * 6
    attrs = _pool_attrs(args[1], args[2], args[3] or 0, args[4] or 1)
    return [b.op("MaxPool", [b.value(node.args[0])], ceil_mode=int(bool(args[5])), **attrs)]


@_rule("avg_pool2d.default")
def _avg_pool(b: Builder, node: torch.fx.Node) -> str:
    args = list(node.args) + [None] * 7
    attrs = _pool_attrs(args[1], args[2], args[3] or 0)
    include = True if args[5] is None else bool(args[5])
    return b.op("AveragePool", [b.value(node.args[0])], ceil_mode=int(bool(args[4])),
                count_include_pad=int(include), **attrs)


@_rule("_adaptive_avg_pool2d.default")
def _adaptive_avg_pool(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    inner, outer = value_of(x).shape[-2:], value_of(node).shape[-2:]
    if list(outer) == [1, 1]:
        return b.op("GlobalAveragePool", [b.value(x)])
    kernel = [i // o for i, o in zip(inner, outer)]
    return b.op("AveragePool", [b.value(x)], kernel_shape=kernel, strides=kernel)


@_rule("constant_pad_nd.default")
def _pad(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    pad, fill = list(node.args[1]), (node.args[2] if len(node.args) > 2 else 0)
    rank, dtype = value_of(x).dim(), value_of(x).dtype
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return b.op("Pad", [b.value(x), b.ints(begins + ends), b.scalar(fill, dtype)])


def _pool_windows_differ(node: torch.fx.Node) -> bool:
    """Whether ONNX's pooling gives another output size than ATen's (with ceil_mode, ATen drops a
    last window that would start in the padding; ONNX keeps it)."""
    args = list(node.args) + [None] * 7
    ceil = args[4] if op_name(node).startswith("avg") else args[5]
    if not ceil:
        return False
    attrs = _pool_attrs(args[1], args[2], args[3] or 0, None if op_name(node).startswith("avg") else (args[4] or 1))
    inner = value_of(args[0]).shape[2:]
    out = value_of(node)
    out = (out[0] if isinstance(out, (tuple, list)) else out).shape[2:]
    dil = attrs.get("dilations", [1] * len(inner))
    for size, o, k, s, p, d in zip(inner, out, attrs["kernel_shape"], attrs["strides"], attrs["pads"], dil):
        if -(-(size + 2 * p - d * (k - 1) - 1) // s) + 1 != o:
            return True
    return False


def _supported_args(node: torch.fx.Node) -> Optional[str]:
    """Why a node whose operator is in the table still cannot be translated, or None."""
    name = op_name(node)
    args = node.args
    if name == "index.Tensor":
        dims = _indexed_dims(node)
        if any(value_of(args[1][d]).dtype == torch.bool for d in dims):
            return "indexing by a mask"
        if dims != list(range(dims[0], dims[0] + len(dims))):
            return "index tensors on dims that are not adjacent"
        if len(dims) > 1 and any(args[1][d].op != "get_attr" for d in dims):
            return "several index tensors computed at run time"
    if name == "native_batch_norm.default" and (args[3] is None) != (args[4] is None):
        return "batch normalization with only one of the running statistics"
    if name == "native_batch_norm.default" and args[5] and args[3] is not None:
        return "batch normalization in training mode that updates its running statistics"
    if name in ("div.Tensor", "div.Scalar") and node.kwargs.get("rounding_mode"):
        return "division with a rounding mode"
    if name == "constant_pad_nd.default" and any(p < 0 for p in args[1]):
        return "negative padding"
    if name == "any.dims" and isinstance(args[1], (list, tuple)) and len(args[1]) == 0:
        return "any over no dims"
    if name in ("max_pool2d_with_indices.default", "avg_pool2d.default", "_adaptive_avg_pool2d.default") and \
            value_of(args[0]).dim() != 4:
        return "pooling of an input without a batch dim"
    if name in ("max_pool2d_with_indices.default", "avg_pool2d.default") and _pool_windows_differ(node):
        return "ceil_mode pooling whose last window starts in the padding"
    if name == "_adaptive_avg_pool2d.default":
        inner, outer = value_of(args[0]).shape[-2:], value_of(node).shape[-2:]
        if any(i % o for i, o in zip(inner, outer)):
            return "adaptive pooling to a size that does not divide the input"
    if name == "avg_pool2d.default" and len(args) > 6 and args[6] is not None:
        return "average pooling with a divisor override"
    if name == "convolution.default" and args[6] and any(d != 1 for d in args[5]):
        return "a dilated transposed convolution"
    return None


# Operators whose later outputs (saved statistics, indices) have no translation: only their
# first output may be used.
FIRST_OUTPUT_ONLY = {"native_batch_norm.default", "_native_batch_norm_legit_no_training.default",
                     "native_layer_norm.default", "max_pool2d_with_indices.default"}


# Operators with several outputs, every one translated.
ALL_OUTPUTS = {"split_with_sizes.default", "split.Tensor", "unbind.int"}


def output_reason(source: torch.fx.Node, index: Any) -> Optional[str]:
    """Why output `index` of a node with several outputs cannot be taken in ONNX, or None."""
    name = op_name(source)
    if name in ALL_OUTPUTS or (name in FIRST_OUTPUT_ONLY and index == 0):
        return None
    return "an output other than the first"


def unsupported_reason(node: torch.fx.Node) -> Optional[str]:
    """None when the node can be translated; else why not (the operator, or its arguments)."""
    name = op_name(node)
    if name == "getitem":
        source = node.args[0]
        return output_reason(source, node.args[1]) if isinstance(source, torch.fx.Node) else "a Python value"
    if name not in TABLE:
        return "not translated to ONNX"
    outputs = value_of(node)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    if not all(_tensor_ok(v) for v in (outputs[:1] if name in FIRST_OUTPUT_ONLY else outputs)):
        return "a value of a type, shape or size Orchid does not take"
    for a in node.all_input_nodes:
        v = value_of(a)
        v = v[0] if isinstance(v, (tuple, list)) else v
        if not _tensor_ok(v):
            return "an input of a type, shape or size Orchid does not take"
    if len(outputs) > 1:  # a node of several outputs: each user must take one that translates
        for user in node.users:
            why = output_reason(node, user.args[1]) if user.target is operator.getitem else "a tuple used whole"
            if why is not None:
                return why
    return _supported_args(node)


def translate(graph: torch.fx.Graph, constants: Dict[str, torch.Tensor], name: str) -> onnx.ModelProto:
    """The ONNX model of a region: a graph of supported nodes whose placeholders are its inputs,
    in order, except those named in constants, which become initializers (weights)."""
    b = Builder()
    inputs: List[onnx.ValueInfoProto] = []
    outputs: List[onnx.ValueInfoProto] = []
    for node in graph.nodes:
        if node.op == "placeholder" and node.name in constants:
            b.known[node] = constants[node.name].detach().cpu()
            b.names[node] = [b.const(b.known[node].numpy(), "w")]
        elif node.op == "placeholder":
            v = value_of(node)
            b.names[node] = [f"in{len(inputs)}"]
            inputs.append(helper.make_tensor_value_info(b.names[node][0], DTYPES[v.dtype][0], list(v.shape)))
        elif node.op == "call_function":
            if node.target is operator.getitem:
                b.names[node] = [b.names[node.args[0]][node.args[1]]]
                continue
            result = TABLE[op_name(node)](b, node)
            b.names[node] = result if isinstance(result, list) else [result]
        elif node.op == "output":
            results = node.args[0] if isinstance(node.args[0], (tuple, list)) else [node.args[0]]
            for i, r in enumerate(results):
                v = value_of(r)
                out = f"out{i}"
                b.nodes.append(helper.make_node("Identity", [b.names[r][0]], [out], name=out))
                outputs.append(helper.make_tensor_value_info(out, DTYPES[v.dtype][0], list(v.shape)))
    graph_proto = helper.make_graph(b.nodes, name, inputs, outputs, b.initializers)
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="orchid.torch_backend")
    return model
