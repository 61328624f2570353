"""A fallback FLOP count (a multiply-add counts 2) for when `orchid inspect` cannot read a
model: the module runs once under a torch dispatch mode that adds up the matrix products and
convolutions it executes (after torch's own decompositions, so matmul, linear and attention
arrive as mm/addmm/bmm/baddbmm). Elementwise work, normalisation and softmax are left out;
they are a small share in these models. Works with torch 1.13 and 2.x."""
import math

from onnx import numpy_helper
import onnx
import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _conv_flops(args, out):
    weight, transposed = args[1], args[6]
    per_output = math.prod(weight.shape[1:]) if not transposed else weight.shape[0] * math.prod(weight.shape[2:]) // \
        max(1, out.shape[1] // weight.shape[1])
    return 2 * out.numel() * per_output


_RULES = {
    aten.mm.default: lambda a, out: 2 * out.numel() * a[0].shape[-1],
    aten.addmm.default: lambda a, out: 2 * out.numel() * a[1].shape[-1],
    aten.bmm.default: lambda a, out: 2 * out.numel() * a[0].shape[-1],
    aten.baddbmm.default: lambda a, out: 2 * out.numel() * a[1].shape[-1],
    aten.convolution.default: _conv_flops,
}


class _Counter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        rule = _RULES.get(func)
        if rule is not None:
            self.flops += int(rule(args, out))
        return out


def torch_flops(module, arrays) -> int:
    counter = _Counter()
    with torch.no_grad(), counter:
        module(*[torch.from_numpy(a) for a in arrays])
    return counter.flops


def onnx_param_bytes(path: str) -> int:
    """Bytes of the initializers and Constant tensors: the weights a runtime must read."""
    model = onnx.load(path)
    total = sum(numpy_helper.to_array(i).nbytes for i in model.graph.initializer)
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    total += numpy_helper.to_array(a.t).nbytes
    return total
