"""OpenVINO, CPU plugin, latency hint, f32 inference precision (no bf16 on AMX machines)."""
import numpy as np
import openvino as ov

from .base import Runner


class OpenVino(Runner):
    name = "openvino"

    def load(self):
        core = ov.Core()
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32",
                  "INFERENCE_NUM_THREADS": self.threads}
        self.compiled = core.compile_model(core.read_model(self.onnx_path), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.outputs = list(self.compiled.outputs)

    def run(self):
        result = self.request.infer(self.inputs)
        return [np.asarray(result[o]) for o in self.outputs]

    def version(self):
        return ov.get_version()
