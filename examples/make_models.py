#!/usr/bin/python3
"""Writes small example ONNX models with seeded random weights into a directory:

  mlp.onnx              two linear layers with a ReLU (MatMul, Add, Relu)
  attention.onnx        single-head softmax attention (MatMul, Transpose, Div, Softmax)
  conv_bn_relu.onnx     Conv, BatchNormalization, Relu, MaxPool, GlobalAveragePool, Flatten, Gemm
  layernorm_gelu.onnx   LayerNormalization followed by GELU in its Erf form

Usage: make_models.py OUT_DIR   (needs the onnx and numpy Python packages)
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def weight(rng, name, shape, scale=None):
    fan_in = shape[-1] if len(shape) < 3 else int(np.prod(shape[1:]))
    scale = scale if scale is not None else 1.0 / math.sqrt(fan_in)
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def model(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="orchid-examples")
    onnx.checker.check_model(m)
    return m


def io(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp(rng):
    inits = [weight(rng, "w1", [64, 128]), weight(rng, "b1", [128], 0.1),
             weight(rng, "w2", [128, 10]), weight(rng, "b2", [10], 0.1)]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
             helper.make_node("Relu", ["h1"], ["h"], name="relu"),
             helper.make_node("MatMul", ["h", "w2"], ["y0"], name="fc2"),
             helper.make_node("Add", ["y0", "b2"], ["y"], name="fc2_bias")]
    return model("mlp", nodes, [io("x", [4, 64])], [io("y", [4, 10])], inits)


def attention(rng):
    d = 32
    inits = [weight(rng, n, [d, d]) for n in ("wq", "wk", "wv")]
    inits.append(numpy_helper.from_array(np.array(math.sqrt(d), dtype=np.float32), "scale"))
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
             helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
             helper.make_node("MatMul", ["x", "wv"], ["v"], name="v_proj"),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="k_t"),
             helper.make_node("MatMul", ["q", "kt"], ["s0"], name="scores"),
             helper.make_node("Div", ["s0", "scale"], ["s"], name="scale"),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="softmax"),
             helper.make_node("MatMul", ["p", "v"], ["y"], name="attend")]
    return model("attention", nodes, [io("x", [2, 16, d])], [io("y", [2, 16, d])], inits)


def conv_bn_relu(rng):
    c = 16
    inits = [weight(rng, "w", [c, 3, 3, 3]), weight(rng, "b", [c], 0.1),
             numpy_helper.from_array((1 + 0.1 * rng.standard_normal(c)).astype(np.float32), "gamma"),
             weight(rng, "beta", [c], 0.1), weight(rng, "mean", [c], 0.1),
             numpy_helper.from_array((0.5 + rng.random(c)).astype(np.float32), "var"),
             weight(rng, "fc_w", [10, c]), weight(rng, "fc_b", [10], 0.1)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["bn"], name="bn"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["mp"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             helper.make_node("GlobalAveragePool", ["mp"], ["gap"], name="gap"),
             helper.make_node("Flatten", ["gap"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1, name="fc")]
    return model("conv_bn_relu", nodes, [io("x", [1, 3, 32, 32])], [io("y", [1, 10])], inits)


def layernorm_gelu(rng):
    d = 64
    inits = [numpy_helper.from_array((1 + 0.1 * rng.standard_normal(d)).astype(np.float32), "gamma"),
             weight(rng, "beta", [d], 0.1)]
    for name, v in (("sqrt2", math.sqrt(2)), ("one", 1.0), ("half", 0.5)):
        inits.append(numpy_helper.from_array(np.array(v, dtype=np.float32), name))
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], axis=-1, epsilon=1e-5, name="ln"),
             helper.make_node("Div", ["n", "sqrt2"], ["g0"], name="gelu_div"),
             helper.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
             helper.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add"),
             helper.make_node("Mul", ["n", "g2"], ["g3"], name="gelu_mul"),
             helper.make_node("Mul", ["g3", "half"], ["y"], name="gelu_half")]
    return model("layernorm_gelu", nodes, [io("x", [8, 64])], [io("y", [8, 64])], inits)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261122)
    for name, build in (("mlp", mlp), ("attention", attention), ("conv_bn_relu", conv_bn_relu),
                        ("layernorm_gelu", layernorm_gelu)):
        path = os.path.join(out, name + ".onnx")
        onnx.save(build(rng), path)
        print("wrote", path)


if __name__ == "__main__":
    main()
