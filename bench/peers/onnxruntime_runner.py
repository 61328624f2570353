"""ONNX Runtime, CPU execution provider, graph optimisation level ALL, no spinning."""
import onnxruntime as ort

from .base import Runner


class OnnxRuntime(Runner):
    name = "onnxruntime"

    def load(self):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(self.onnx_path, opts, providers=["CPUExecutionProvider"])

    def run(self):
        return self.session.run(None, self.inputs)

    def version(self):
        return ort.__version__
