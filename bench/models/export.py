"""Exports benchmark models to ONNX (opset 17, fp32, seeded random weights) into a cache
directory, with a manifest. Runs on Debian's /usr/bin/python3 with torch 1.13:

  /usr/bin/python3 -m bench.models.export --cache DIR [--models a,b,...] [--orchid BIN]

For each model, DIR/<name>/ holds model.onnx, weights.pt (the state_dict, so the torch peers
can rebuild the same module) and inputs/<input>.npy. DIR/manifest.json maps each name to its
inputs and shapes, outputs, FLOPs (a multiply-add counts 2), parameter bytes and primitive
count (both from `orchid inspect` when the binary is given and reads the model; otherwise the
FLOPs come from flops.py and the primitive count is null, with Orchid's error recorded).
Models already in the manifest with their files present are not exported again.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch

from . import registry
from .flops import onnx_param_bytes, torch_flops


def drop_zero_dropouts(path):
    """Replaces Dropout nodes whose ratio is a constant 0 by Identity: they are the identity
    whatever their training_mode. torchvision 0.14's swin_t calls F.dropout(p=0) with the
    default training=True, which exports a training-mode Dropout that runtimes refuse."""
    import onnx
    from onnx import helper, numpy_helper
    model = onnx.load(path)
    graph = model.graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    constants.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in graph.node
                      if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"})
    used = {name for n in graph.node for name in n.input} | {o.name for o in graph.output}
    changed = 0
    for i, n in enumerate(graph.node):
        ratio = constants.get(n.input[1]) if n.op_type == "Dropout" and len(n.input) > 1 else None
        if ratio is not None and float(ratio) == 0.0 and (len(n.output) < 2 or n.output[1] not in used):
            graph.node[i].CopyFrom(helper.make_node("Identity", [n.input[0]], [n.output[0]], name=n.name))
            changed += 1
    if changed:
        onnx.save(model, path)
    return changed


def export_one(spec, out_dir):
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    torch.manual_seed(registry.SEED)
    module = spec.build()
    torch.save(module.state_dict(), os.path.join(out_dir, "weights.pt"))
    arrays = registry.make_inputs(spec)
    for i, a in zip(spec.inputs, arrays):
        np.save(os.path.join(out_dir, "inputs", f"{i.name}.npy"), a)
    # Exported without torch.no_grad(): the inference fast paths of attention have no export.
    torch.onnx.export(module, tuple(torch.from_numpy(a) for a in arrays), os.path.join(out_dir, "model.onnx"),
                      opset_version=17, do_constant_folding=True,
                      input_names=[i.name for i in spec.inputs], output_names=list(spec.outputs))
    drop_zero_dropouts(os.path.join(out_dir, "model.onnx"))


def orchid_inspect(orchid, model_path):
    """(flops, primitives, param_bytes) as `orchid inspect` prints them, or None on failure."""
    try:
        out = subprocess.run([orchid, "inspect", model_path], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"orchid inspect: {e}"
    if out.returncode != 0:
        return None, f"orchid inspect exit {out.returncode}: {(out.stderr or out.stdout).strip()[:300]}"

    def number(pattern):  # e.g. "FLOPs: 119 MFLOP (119276800)", "primitives: 85"
        m = re.search(pattern, out.stdout, re.MULTILINE)
        return int(m.group(1)) if m else None
    return {"flops": number(r"^FLOPs:.*\((\d+)\)"), "primitives": number(r"^primitives: (\d+)"),
            "param_bytes": number(r"^parameters:.*\((\d+) bytes")}, None


def describe(spec, out_dir, orchid):
    model_path = os.path.join(out_dir, "model.onnx")
    param_bytes = onnx_param_bytes(model_path)
    flops = torch_flops(spec.build(), registry.make_inputs(spec))  # FLOPs do not depend on the weights
    entry = {"name": spec.name, "family": spec.family, "note": spec.note, "default": spec.default,
             "onnx": os.path.relpath(model_path, os.path.dirname(out_dir)),
             "inputs": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype} for i in spec.inputs],
             "outputs": list(spec.outputs), "param_bytes": param_bytes,
             "flops": flops, "flops_source": "bench/models/flops.py (torch matmuls and convolutions)",
             "primitives": None}
    if orchid:
        info, error = orchid_inspect(orchid, model_path)
        if info is None:
            entry["orchid_inspect_error"] = error
        else:
            entry["primitives"] = info["primitives"]
            if info["flops"] is not None:
                entry["flops_torch"], entry["flops"], entry["flops_source"] = flops, info["flops"], "orchid inspect"
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--models", default="default", help="comma-separated names, 'default' or 'all'")
    ap.add_argument("--orchid", default=None, help="path of the orchid binary, for FLOPs and primitives")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    names = {"default": registry.DEFAULT, "all": list(registry.MODELS)}.get(args.models) or args.models.split(",")
    manifest_path = os.path.join(args.cache, "manifest.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    orchid = args.orchid if args.orchid and os.access(args.orchid, os.X_OK) else None
    for name in names:
        spec = registry.get(name)
        out_dir = os.path.join(args.cache, name)
        done = name in manifest and os.path.exists(os.path.join(out_dir, "model.onnx"))
        if done and (manifest[name].get("primitives") is not None or not orchid):
            continue
        t0 = time.time()
        if not done:
            export_one(spec, out_dir)
        manifest[name] = describe(spec, out_dir, orchid)
        print(f"export: {name} in {time.time() - t0:.1f} s: {manifest[name]['flops'] / 1e9:.3f} GFLOP, "
              f"{manifest[name]['param_bytes'] / 1e6:.1f} MB parameters, primitives {manifest[name]['primitives']}", flush=True)
        with open(manifest_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=1)
        os.replace(manifest_path + ".tmp", manifest_path)


if __name__ == "__main__":
    sys.exit(main())
