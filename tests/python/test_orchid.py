"""The orchid Python package over its extension module: compiling ONNX models given as a path,
bytes or a ModelProto, running them on NumPy arrays (positional and by name) against NumPy's own
arithmetic on seeded random inputs, loading an artifact again, and the errors a user meets, each
an OrchidError with Orchid's message. Runs in the default test run (CTest Python.pytest)."""

import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import orchid

CACHE = os.environ.get("ORCHID_TEST_CACHE") or None


def mlp_model(seed=0):
    """y = relu(x @ w1 + b1) @ w2 + b2 with seeded weights; x: f32 [4, 16]."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((16, 32), dtype=np.float32)
    b1 = rng.standard_normal(32, dtype=np.float32)
    w2 = rng.standard_normal((32, 8), dtype=np.float32)
    b2 = rng.standard_normal(8, dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["o"], name="fc2"),
        helper.make_node("Add", ["o", "b2"], ["y"], name="bias2"),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(a, n) for a, n in [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    reference = lambda x: np.maximum(x @ w1 + b1, 0) @ w2 + b2  # noqa: E731
    return model, reference


def two_inputs_model():
    """s = a + b (f32 [3, 5]), n = argmax(a, axis 1) (i64 [3])."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("ArgMax", ["a"], ["n"], name="argmax", axis=1, keepdims=0)]
    graph = helper.make_graph(
        nodes, "two", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 5]) for n in ("a", "b")],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    model, reference = mlp_model()
    path = tmp_path_factory.mktemp("mlp") / "model.onnx"
    onnx.save(model, str(path))
    compiled = orchid.compile(path, tmp_path_factory.mktemp("out") / "mlp.orchid", cache_dir=CACHE)
    return compiled, reference


def test_a_compiled_model_computes_what_numpy_computes(mlp):
    compiled, reference = mlp
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((4, 16), dtype=np.float32)
        y = compiled(x)
        assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (4, 8)
        np.testing.assert_allclose(y, reference(x), rtol=1e-4, atol=1e-4)


def test_outputs_are_aligned_for_the_runtime_to_write_in_place(mlp):
    compiled, _ = mlp
    y = compiled(np.zeros((4, 16), np.float32))
    assert y.ctypes.data % 64 == 0 and y.flags.c_contiguous and y.flags.writeable


def test_specs_report_and_summary(mlp):
    compiled, _ = mlp
    assert compiled.inputs == [orchid.TensorSpec("x", "f32", (4, 16))]
    assert compiled.outputs == [orchid.TensorSpec("y", "f32", (4, 8))]
    assert "verified against the interpreter: yes" in compiled.report
    assert "verified against the interpreter: yes" in compiled.compile_summary


def test_load_runs_the_same_artifact(mlp):
    compiled, reference = mlp
    again = orchid.load(compiled.path)
    x = np.random.default_rng(7).standard_normal((4, 16), dtype=np.float32)
    np.testing.assert_array_equal(again(x), compiled(x))


def test_threads_are_asked_for_or_torchs(mlp, monkeypatch):
    compiled, _ = mlp
    x = np.random.default_rng(5).standard_normal((4, 16), dtype=np.float32)
    one = orchid.load(compiled.path, threads=1)
    assert one.threads == 1
    np.testing.assert_array_equal(one(x), compiled(x))
    assert orchid.load(compiled.path).threads >= 1

    class Torch:  # a process that imported torch: its intra-op thread count
        @staticmethod
        def get_num_threads():
            return 1

    monkeypatch.setitem(sys.modules, "torch", Torch)
    assert orchid.load(compiled.path).threads == 1


def test_bytes_and_model_protos_compile_too(tmp_path):
    model = two_inputs_model()
    for given, out in [(model, "proto"), (model.SerializeToString(), "bytes")]:
        compiled = orchid.compile(given, tmp_path / out, cache_dir=CACHE)
        a = np.random.default_rng(1).standard_normal((3, 5), dtype=np.float32)
        b = np.random.default_rng(2).standard_normal((3, 5), dtype=np.float32)
        s, n = compiled(a, b)
        np.testing.assert_allclose(s, a + b, rtol=1e-6)
        assert n.dtype == np.int64
        np.testing.assert_array_equal(n, np.argmax(a, axis=1))
        by_name = compiled.run({"b": b, "a": a})
        assert list(by_name) == ["s", "n"]
        np.testing.assert_array_equal(by_name["s"], s)


def test_inputs_are_converted_only_without_loss(mlp):
    compiled, reference = mlp
    x64 = np.random.default_rng(3).standard_normal((4, 16))  # float64: converting would round
    with pytest.raises(orchid.OrchidError, match="input 'x' must be f32, got float64"):
        compiled(x64)
    ints = np.arange(64, dtype=np.int8).reshape(4, 16)  # int8 -> f32 is exact
    np.testing.assert_allclose(compiled(ints), reference(ints.astype(np.float32)), rtol=1e-4, atol=1e-3)
    x = np.random.default_rng(4).standard_normal((16, 4), dtype=np.float32).T  # not C-contiguous
    np.testing.assert_allclose(compiled(x), reference(x), rtol=1e-4, atol=1e-4)


def test_errors_name_what_is_wrong(mlp, tmp_path):
    compiled, _ = mlp
    with pytest.raises(orchid.OrchidError, match=r"input 'x' must be f32\[4,16\], got a float32 array of shape \[4,15\]"):
        compiled(np.zeros((4, 15), dtype=np.float32))
    with pytest.raises(orchid.OrchidError, match="1 inputs expected"):
        compiled()
    with pytest.raises(orchid.OrchidError, match="unknown input 'z'"):
        compiled.run({"x": np.zeros((4, 16), np.float32), "z": 1})
    with pytest.raises(orchid.OrchidError, match="input 'x' is missing"):
        compiled.run({})
    missing = tmp_path / "nothing.onnx"
    with pytest.raises(orchid.OrchidError, match=str(missing)):
        orchid.compile(missing, tmp_path / "never", cache_dir=CACHE)
    assert not (tmp_path / "never").exists()
    with pytest.raises(orchid.OrchidError, match="orchestrate: 'fastest'"):
        orchid.compile(missing, tmp_path / "never", orchestrate="fastest", cache_dir=CACHE)
    with pytest.raises(orchid.OrchidError, match="gpu: 'a100' is for target cuda"):
        orchid.compile(missing, tmp_path / "never", gpu="a100", cache_dir=CACHE)
    with pytest.raises(orchid.OrchidError, match="precision bf16 is for target cuda"):
        orchid.compile(mlp_model()[0], tmp_path / "never", precision="bf16", cache_dir=CACHE)
    assert not (tmp_path / "never").exists()
    with pytest.raises(orchid.OrchidError, match="precision: 'fp8'"):
        orchid.compile(missing, tmp_path / "never", target="cuda", precision="fp8", cache_dir=CACHE)
    with pytest.raises(orchid.OrchidError, match="unknown CUDA target preset 'v100'"):
        orchid.compile(missing, tmp_path / "never", target="cuda", gpu="v100", cache_dir=CACHE)
    with pytest.raises(orchid.OrchidError):
        orchid.load(tmp_path / "not-an-artifact")
    with pytest.raises(TypeError):
        orchid.compile(42)
    assert issubclass(orchid.OrchidError, RuntimeError)


class Dlpack:
    """A tensor of another library, as NumPy sees it only through the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_tensors_are_read_in_place(mlp):
    compiled, reference = mlp
    x = np.random.default_rng(8).standard_normal((4, 16), dtype=np.float32)
    np.testing.assert_allclose(compiled(Dlpack(x)), reference(x), rtol=1e-4, atol=1e-4)
    shared = orchid._as_input(Dlpack(x), compiled._in[0])
    assert np.shares_memory(shared, x)
    with pytest.raises(orchid.OrchidError, match="input 'x' must be f32, got float64"):
        compiled(Dlpack(x.astype(np.float64)))


def dynamic_batch_model():
    """y = x * 2 with x: f32 [N, 3], N dynamic."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"], name="double")], "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(np.array(2, np.float32), "two")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_shapes_fix_dynamic_dims(tmp_path):
    model = dynamic_batch_model()
    with pytest.raises(orchid.OrchidError, match="'x'"):
        orchid.compile(model, tmp_path / "unfixed", cache_dir=CACHE)
    compiled = orchid.compile(model, tmp_path / "fixed", shapes={"x": (5, 3)}, cache_dir=CACHE)
    assert compiled.inputs == [orchid.TensorSpec("x", "f32", (5, 3))]
    x = np.random.default_rng(9).standard_normal((5, 3), dtype=np.float32)
    np.testing.assert_array_equal(compiled(x), x * 2)


def test_measured_choices_are_kept_in_the_tuning_database(tmp_path):
    model, reference = mlp_model(seed=3)
    db = tmp_path / "tuning.db"
    assert orchid._orchid_program() is not None, "the package finds the orchid program that measures candidates"
    compiled = orchid.compile(model, tmp_path / "measured", db=db, cache_dir=CACHE)
    assert db.is_file() and db.stat().st_size > 0
    x = np.random.default_rng(10).standard_normal((4, 16), dtype=np.float32)
    np.testing.assert_allclose(compiled(x), reference(x), rtol=1e-4, atol=1e-4)
    unmeasured = orchid.compile(model, tmp_path / "unmeasured", measure=False, db=tmp_path / "unused.db",
                                cache_dir=CACHE)
    assert not (tmp_path / "unused.db").exists()
    np.testing.assert_allclose(unmeasured(x), reference(x), rtol=1e-4, atol=1e-4)


def test_a_scalar_input_stays_zero_dimensional(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["y"], name="square")], "scalar",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    compiled = orchid.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                              tmp_path / "scalar", cache_dir=CACHE)
    for x in (np.float32(3), np.array(3, np.float32), 3.0):
        y = compiled(x)
        assert y.shape == () and y == 9
