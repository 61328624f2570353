"""The benchmark models: name -> how to build the torch module and its inputs.

Importable from both Pythons: Debian's /usr/bin/python3 with torch 1.13 exports the models,
and the bench virtual environment's torch 2.x rebuilds the same modules for the torch peers
(loading the state_dict saved at export time). Every module is built under a fixed seed.
"""
from dataclasses import dataclass
from typing import Callable, List, Tuple

SEED = 20261122


@dataclass(frozen=True)
class Input:
    """A graph input: floats are standard normal; ints are uniform in [low, high)."""
    name: str
    shape: Tuple[int, ...]
    dtype: str = "float32"
    low: int = 0
    high: int = 0


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str                    # vision, transformer, korch, welder, mirage
    build: Callable[[], object]    # returns a torch.nn.Module in eval mode
    inputs: Tuple[Input, ...]
    outputs: Tuple[str, ...] = ("y",)
    note: str = ""
    default: bool = False          # part of `make bench`'s subset


def _vision(name, batch=1, default=False, note=""):
    from . import vision
    return ModelSpec(name if batch == 1 else f"{name}_b{batch}", "vision",
                     lambda: vision.build(name), (Input("x", (batch, 3, 224, 224)),),
                     note=note or f"torchvision {name}, batch {batch}", default=default)


def _bert(name, layers, hidden, heads, batch=1, default=False):
    from . import text
    return ModelSpec(name, "transformer", lambda: text.bert(layers, hidden, heads),
                     (Input("input_ids", (batch, 128), "int64", 0, text.VOCAB),),
                     note=f"BERT encoder: {layers} layers, hidden {hidden}, {heads} heads, seq 128, batch {batch}",
                     default=default)


def _all_models() -> List[ModelSpec]:
    from . import korch, mirage, nerf
    models = [
        _vision("resnet18", default=True),
        _vision("mobilenet_v2", default=True),
        _vision("efficientnet_b0"),
        _vision("vit_b_16"),
        _vision("vit_small", default=True, note="torchvision ViT: 4 layers, width 128, 4 heads, 224x224"),
        _vision("swin_t"),
        _bert("bert_base", 12, 768, 12, default=True),
        _bert("bert_tiny", 2, 128, 2, default=True),
        _vision("resnet18", batch=8),
        _bert("bert_base_b8", 12, 768, 12, batch=8),
    ]
    models += korch.specs() + nerf.specs() + mirage.specs()
    return models


MODELS = {m.name: m for m in _all_models()}
DEFAULT = [m.name for m in MODELS.values() if m.default]


def get(name: str) -> ModelSpec:
    if name not in MODELS:
        raise KeyError(f"unknown model '{name}'; known: {', '.join(MODELS)}")
    return MODELS[name]


def make_inputs(spec: ModelSpec):
    """The seeded inputs as numpy arrays, in the module's argument order."""
    import numpy as np
    rng = np.random.default_rng(SEED)
    arrays = []
    for i in spec.inputs:
        if i.dtype == "float32":
            arrays.append(rng.standard_normal(i.shape).astype(np.float32))
        else:
            arrays.append(rng.integers(i.low, i.high, size=i.shape).astype(i.dtype))
    return arrays
