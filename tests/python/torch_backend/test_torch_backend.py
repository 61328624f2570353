"""torch.compile(module, backend="orchid") against eager PyTorch on seeded inputs: small modules
that exercise the ATen-to-ONNX translation, the benchmark models, and the backend's behaviour
(fallback to eager with one warning per operator, recompiling for new shapes and changed
weights, inference only, DLPack without copies, threads). Needs torch 2.x and torchvision:
`make test-python` runs it in a fresh virtual environment (the default run ignores it)."""

import os
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

import orchid
from orchid import torch_backend

CACHE = os.environ.get("ORCHID_TEST_CACHE") or None
OPTIONS = {"cache_dir": CACHE} if CACHE else {}
REPO = Path(__file__).resolve().parents[3]


class Spy:
    """The orchid backend, keeping each graph it returns (to look at its compiled programs)."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs, **kwargs):
        graph = torch_backend.orchid_backend(gm, example_inputs, **kwargs)
        self.graphs.append(graph)
        return graph

    def programs(self):
        return [p for g in self.graphs for p in g.programs.values()]

    def regions(self):
        return [m for p in self.programs() for m in p.modules() if isinstance(m, torch_backend._Region)]


def run_both(module, *inputs, spy=None):
    """(orchid's outputs, eager's outputs) under no_grad; fails on any fallback warning."""
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=spy or Spy(), options=OPTIONS)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", torch_backend.OrchidFallbackWarning)
        return compiled(*inputs), module(*inputs)


def assert_close(got, want, tolerance=1e-4):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, torch.Tensor) and g.shape == w.shape and g.dtype == w.dtype
        if w.is_floating_point():
            error = float((g - w).norm() / max(float(w.norm()), 1e-30))
            assert error <= tolerance, f"relative L2 error {error:.3g}"
        else:
            assert torch.equal(g, w)


def test_the_installed_package_registers_the_backend_by_its_entry_point():
    assert "orchid" in torch._dynamo.list_backends()
    assert torch._dynamo.lookup_backend("orchid") is torch_backend.orchid_backend


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.norm, self.fc2 = torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 8)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        return torch.softmax(self.fc2(h), dim=-1), torch.tanh(h).mean(dim=1)


def test_an_mlp_runs_in_one_orchid_region():
    torch.manual_seed(0)
    spy = Spy()
    got, want = run_both(Mlp().eval(), torch.randn(4, 16), spy=spy)
    assert_close(got, want)
    assert len(spy.regions()) == 1


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.BatchNorm2d(8),
                                        torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1))
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.norm = torch.nn.InstanceNorm2d(8, affine=True)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = self.stem(x)
        y = y + F.hardswish(self.depthwise(y))
        y = F.avg_pool2d(self.norm(y), 2)
        y = F.interpolate(y, scale_factor=2, mode="nearest")
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(torch.clamp(y, -1, 1))


def test_a_cnn_matches_eager():
    torch.manual_seed(1)
    cnn = Cnn().eval()
    with torch.no_grad():  # batch norm with statistics that are not the identity
        cnn.stem[1].running_mean.uniform_(-1, 1)
        cnn.stem[1].running_var.uniform_(0.5, 2)
    spy = Spy()
    got, want = run_both(cnn, torch.randn(2, 3, 32, 32), spy=spy)
    assert_close(got, want)
    assert len(spy.regions()) >= 1


class Attention(torch.nn.Module):
    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.embed = torch.nn.Embedding(50, width)

    def forward(self, ids, mask):
        x = self.embed(ids)
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        y = y.transpose(1, 2).reshape(b, t, c)
        return self.out(y)[:, 0], (ids > 10).sum(dim=1)


def test_attention_with_embeddings_and_a_mask_matches_eager():
    torch.manual_seed(2)
    ids = torch.randint(0, 50, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[1, 8:] = False
    got, want = run_both(Attention().eval(), ids, mask)
    assert_close(got, want)


class WithCumsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(torch.cumsum(torch.relu(self.fc(x)), dim=1)))


def test_an_unsupported_operator_runs_eagerly_with_one_warning_naming_it():
    torch.manual_seed(3)
    module, x = WithCumsum().eval(), torch.randn(3, 8)
    spy = Spy()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=spy, options=OPTIONS)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
        again = compiled(x)
        want = module(x)
    assert_close(got, want)
    assert_close(again, want)
    fallback = [str(w.message) for w in caught if issubclass(w.category, torch_backend.OrchidFallbackWarning)]
    assert len(fallback) == 1 and "aten.cumsum" in fallback[0] and "\n" not in fallback[0], fallback
    assert len(spy.regions()) == 2  # the linear layers before and after it


class EdgeCases(torch.nn.Module):
    """Operators whose ONNX form differs in a corner: alpha, a 0-d index, any, pooling whose
    windows ONNX counts differently (ceil_mode), pooling of an input without a batch dim."""

    def forward(self, x, y):
        a = torch.add(x, 2, alpha=3) + torch.sub(x, y, alpha=0.5)
        b = torch.index_select(x, 1, torch.tensor(1))
        c = (x > 1).any(dim=1, keepdim=True)
        d = F.max_pool2d(x[None, None], 2, 2, padding=1, ceil_mode=True)
        e = F.avg_pool2d(x[None], 2, ceil_mode=True)
        return a, b, c, d, e


def test_corner_cases_of_the_translation_match_eager():
    torch.manual_seed(8)
    x, y = torch.randn(5, 5), torch.randn(5, 5)
    module = EdgeCases()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=Spy(), options=OPTIONS)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_backend.OrchidFallbackWarning)
        assert_close(compiled(x, y), module(x, y))


class Counting(torch.nn.Module):
    """Updates a buffer in place on every call, as batch normalization in training mode does."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.calls += 1
        return self.fc(x) * 2


def test_a_buffer_the_graph_updates_is_state_and_not_compiled_in():
    torch.manual_seed(9)
    module, x = Counting(), torch.randn(3, 4)
    spy = Spy()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=spy, options=OPTIONS)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_backend.OrchidFallbackWarning)
        for _ in range(4):
            assert_close(compiled(x), module.fc(x) * 2)
    assert int(module.calls) == 4
    assert len(spy.programs()) <= 2 and spy.regions()


def test_a_new_shape_compiles_again_and_a_known_one_does_not():
    torch.manual_seed(4)
    module = Mlp().eval()
    spy = Spy()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=spy, options=OPTIONS, dynamic=False)
    with torch.no_grad():
        for batch in (2, 5, 2):
            x = torch.randn(batch, 16)
            assert_close(compiled(x), module(x))
    assert len(spy.programs()) == 2
    # Dynamo's default makes the batch symbolic after a change; each shape is compiled when met
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=Spy(), options=OPTIONS)
    with torch.no_grad():
        for batch in (3, 6, 7, 3):
            x = torch.randn(batch, 16)
            assert_close(compiled(x), module(x))


def test_weights_changed_in_place_are_compiled_in_anew():
    torch.manual_seed(5)
    module, x = Mlp().eval(), torch.randn(4, 16)
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=Spy(), options=OPTIONS)
    with torch.no_grad():
        assert_close(compiled(x), module(x))
        module.fc2.weight.mul_(-2)
        assert_close(compiled(x), module(x))


def test_with_gradients_enabled_the_graph_runs_eagerly():
    torch.manual_seed(6)
    module, x = Mlp(), torch.randn(4, 16)
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=Spy(), options=OPTIONS)
    with pytest.warns(torch_backend.OrchidFallbackWarning, match="inference"):
        y, _ = compiled(x)
    assert y.grad_fn is not None
    y.sum().backward()
    assert module.fc1.weight.grad is not None


def small_model(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])])
    return orchid.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                          tmp_path / "relu", cache_dir=CACHE)


def test_tensors_cross_into_and_out_of_orchid_without_copies(tmp_path):
    model = small_model(tmp_path)
    seen = {}

    class Recording(orchid.CompiledModel):
        def __call__(self, *arrays):
            seen["inputs"] = arrays
            seen["output"] = super().__call__(*arrays)
            return seen["output"]

    region = torch_backend._Region(Recording(model.path), tuple_output=False)
    x = torch.randn(8, 16)
    y = region(x)
    assert seen["inputs"][0].ctypes.data == x.data_ptr()
    assert y.data_ptr() == seen["output"].ctypes.data
    assert torch.equal(y, torch.relu(x))


def thread_count():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("threads", [1, 2])
def test_orchid_runs_on_torchs_threads_and_adds_none(threads):
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(7)
        module = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)).eval()
        x = torch.randn(64, 256)
        spy = Spy()
        got, want = run_both(module, x, spy=spy)
        assert_close(got, want)
        regions = spy.regions()
        assert regions and all(r.model.threads == threads for r in regions)
        compiled = torch.compile(module, backend=spy, options=OPTIONS)
        with torch.no_grad():
            for _ in range(3):
                module(x)
                compiled(x)
            before, peak, done = thread_count(), [0], [False]

            def sample():
                while not done[0]:
                    peak[0] = max(peak[0], thread_count())
                    time.sleep(0.0005)

            sampler = threading.Thread(target=sample)
            sampler.start()
            for _ in range(200):
                compiled(x)
            done[0] = True
            sampler.join()
        assert peak[0] <= before + 1, f"{before} threads before the runs, {peak[0]} during them (the sampler is one)"
    finally:
        torch.set_num_threads(previous)


BENCHMARK_MODELS = ["bert_tiny", "vit_small", "mobilenet_v2", "candy", "efficientvit_block", "mha_prefill",
                    "gqa_decode", "rmsnorm_linear"]


@pytest.mark.parametrize("name", BENCHMARK_MODELS)
def test_benchmark_models_match_eager(name):
    sys.path.insert(0, str(REPO))
    try:
        from bench.models import registry
    finally:
        sys.path.remove(str(REPO))
    spec = registry.get(name)
    torch.manual_seed(registry.SEED)
    module = spec.build()
    inputs = [torch.from_numpy(a) for a in registry.make_inputs(spec)]
    spy = Spy()
    got, want = run_both(module, *inputs, spy=spy)
    assert_close(got, want)
    assert spy.regions()


def test_the_example_runs():
    import subprocess
    example = REPO / "examples" / "python" / "torchvision_compile.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "relative L2 error against eager" in out.stdout and "orchid:" in out.stdout
