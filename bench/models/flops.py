"""A fallback FLOP count (a multiply-add counts 2) over an ONNX model's MatMul, Gemm and Conv
nodes, from ONNX shape inference, for when `orchid inspect` is not available. Other operators
(elementwise, normalisation, softmax) are left out; they are a small share in these models."""
import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


def _shapes(model):
    shapes = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = [d.dim_value for d in dims]
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def _node_flops(node, shapes):
    ins = [shapes.get(n) for n in node.input]
    out = shapes.get(node.output[0])
    if out is None or any(not s for s in ins[:2]):
        return 0
    if node.op_type == "MatMul":
        return 2 * int(np.prod(out)) * ins[0][-1]
    if node.op_type == "Gemm":
        trans_a = next((a.i for a in node.attribute if a.name == "transA"), 0)
        return 2 * int(np.prod(out)) * (ins[0][0] if trans_a else ins[0][1])
    if node.op_type in ("Conv", "ConvTranspose"):
        w = ins[1]  # Conv: [M, C/group, kh, kw]; per output element C/group * kh * kw MACs
        per_out = int(np.prod(w[1:])) if node.op_type == "Conv" else int(np.prod(w[2:])) * w[0] // w[1]
        return 2 * int(np.prod(out)) * per_out
    return 0


def onnx_flops(path: str) -> int:
    model = shape_inference.infer_shapes(onnx.load(path))
    shapes = _shapes(model)
    return sum(_node_flops(n, shapes) for n in model.graph.node)


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
