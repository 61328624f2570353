"""Apache TVM (Relax): the ONNX frontend, MetaSchedule tuning of every task for this CPU, then
the Relax VM. The tuning budget is options["tvm_trials"] trials per task (0: untuned, TVM's
default schedules); its database lives in MODEL_DIR/tvm-<mcpu>-<trials>/ and, once tuning
finished (TUNED_MARK), is reused by later runs without tuning again, so compile_s counts
tuning only the first time (the version string says when the database was reused)."""
import os
import time

import numpy as np
import onnx

from .base import Runner, Unsupported

TUNED_MARK = "tuning-complete"  # written into the database folder when tuning finished


def host_mcpu() -> str:
    """LLVM's name for this CPU (e.g. sapphirerapids), from the LLVM inside TVM."""
    import tvm
    get = tvm.get_global_func("target.llvm_get_system_cpu", allow_missing=True)
    if get is None:
        raise Unsupported("this TVM build has no LLVM CPU detection (target.llvm_get_system_cpu)")
    return str(get())


class Tvm(Runner):
    name = "tvm"

    def load(self):
        try:
            import tvm
            from tvm import relax
            from tvm.relax.frontend.onnx import from_onnx
        except ImportError as e:
            raise Unsupported(f"apache-tvm is not installed in the bench venv: {e}")
        if tvm.support.libinfo().get("USE_LLVM") in ("OFF", None):
            raise Unsupported("this TVM wheel was built without LLVM: it cannot generate CPU code")
        trials = int(self.options.get("tvm_trials", 64))
        mcpu = host_mcpu()
        target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": self.threads})
        work_dir = os.path.join(self.model_dir, f"tvm-{mcpu}-{trials}")
        self.reused_database = os.path.exists(os.path.join(work_dir, TUNED_MARK))
        mod = from_onnx(onnx.load(self.onnx_path), keep_params_in_input=False)
        if trials > 0:
            tasks = 0 if self.reused_database else 64  # 64: more than the tuning tasks of any model here
            start = time.perf_counter()
            mod = relax.get_pipeline("static_shape_tuning", target=target, work_dir=work_dir,
                                     total_trials=trials * tasks, max_trials_per_task=trials)(mod)
            if not self.reused_database:  # the mark holds the tuning seconds, for later reports
                open(os.path.join(work_dir, TUNED_MARK), "w").write(f"{time.perf_counter() - start:.1f}\n")
            self.tuned_s = open(os.path.join(work_dir, TUNED_MARK)).read().strip()
        self.executable = tvm.compile(mod, target=target)
        self.vm = relax.VirtualMachine(self.executable, tvm.cpu())
        self.args = [tvm.runtime.tensor(self.inputs[i["name"]]) for i in self.entry["inputs"]]
        self.trials, self.mcpu = trials, mcpu

    def run(self):
        out = self.vm["main"](*self.args)
        outs = out if isinstance(out, (list, tuple)) or type(out).__name__ == "Array" else [out]
        return [np.asarray(o.numpy()) for o in outs]

    def version(self):
        import tvm
        return f"{tvm.__version__} (mcpu {getattr(self, 'mcpu', '?')}, {getattr(self, 'trials', '?')} trials/task" + \
            (f", tuning database reused; tuning took {self.tuned_s} s)" if getattr(self, "reused_database", False)
             else ")")
