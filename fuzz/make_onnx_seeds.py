"""Writes the seed models of the ONNX loader's fuzz target (fuzz/corpus/onnx/): small models
that reach the loader's and fission's main paths (initializers, attributes of each kind,
dynamic and fixed shapes, a subgraph, shape computations). Needs the `onnx` package; the
files it writes are checked in, so neither the fuzz build nor the tests run this."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "onnx")


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="orchid-seeds")
    m.ir_version = 8
    onnx.checker.check_model(m)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, shape, seed):
    return numpy_helper.from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), name)


def main():
    os.makedirs(OUT, exist_ok=True)
    save("matmul_softmax", [helper.make_node("MatMul", ["x", "w"], ["h"]),
                            helper.make_node("Softmax", ["h"], ["y"], axis=-1)],
         [vi("x", [2, 4])], [vi("y", [2, 3])], [init("w", [4, 3], 1)])
    save("conv_relu_pool", [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
                            helper.make_node("Relu", ["c"], ["r"]),
                            helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 2, 2])], [init("w", [3, 2, 3, 3], 2), init("b", [3], 3)])
    save("reshape_transpose_gather",
         [helper.make_node("Reshape", ["x", "shape"], ["r"]),
          helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
          helper.make_node("Gather", ["t", "idx"], ["y"], axis=0)],
         [vi("x", [2, 3]), vi("idx", [2], TensorProto.INT64)], [vi("y", [2, 2])],
         [numpy_helper.from_array(np.array([3, 2], dtype=np.int64), "shape")])
    save("layernorm_gelu", [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
                            helper.make_node("Erf", ["n"], ["e"]),
                            helper.make_node("Add", ["e", "n"], ["y"])],
         [vi("x", ["batch", 4])], [vi("y", ["batch", 4])], [init("g", [4], 4), init("b", [4], 5)])
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["o"])], "then", [], [vi("o", [3])])
    other = helper.make_graph([helper.make_node("Abs", ["x"], ["o"])], "else", [], [vi("o", [3])])
    save("if_branch", [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
         [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("y", [3])])
    save("shape_slice_concat",
         [helper.make_node("Shape", ["x"], ["s"]),
          helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["sl"]),
          helper.make_node("Concat", ["sl", "sl"], ["c"], axis=1),
          helper.make_node("ReduceSum", ["c", "axes"], ["y"], keepdims=1)],
         [vi("x", [2, 6])], [vi("y", [2, 1])],
         [numpy_helper.from_array(np.array([1], dtype=np.int64), "starts"),
          numpy_helper.from_array(np.array([4], dtype=np.int64), "ends"),
          numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")])
    save("lstm", [helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=2)],
         [vi("x", [2, 1, 3])], [vi("y", [2, 1, 1, 2])], [init("w", [1, 8, 3], 6), init("r", [1, 8, 2], 7)])
    print("wrote", len(os.listdir(OUT)), "seeds to", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
