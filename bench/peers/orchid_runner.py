"""Orchid's compiled artifacts, one runtime per orchestration strategy (per-op, greedy, optimal),
and greedy with the superoptimizer's μGraph kernels (superopt).

The commands this runner calls (the contract for Orchid's CPU backend; see bench/README.md):

  orchid compile MODEL.onnx -o DIR --orchestrate STRATEGY [--superopt]
  orchid run DIR --input NAME=FILE.npy ... --output-dir OUT        one run; OUT/<output>.npy
  orchid run DIR --input NAME=FILE.npy ... --bench --min-time S --min-runs N --json
      warm-up, then at least N runs and S seconds; prints {"times_ms": [...],
      "peak_rss_mb": ...} on stdout (peak_rss_mb optional)

Until `orchid compile` exists the runner reports status "unsupported" with that reason; it
never makes up a number. Timing happens inside Orchid's process, so the process start is not
counted; peak RSS is the largest Orchid child process's.
"""
import json
import os
import re
import resource
import shutil
import subprocess

import numpy as np

from .base import Runner, Unsupported


def orchid_subcommands(orchid: str) -> set:
    out = subprocess.run([orchid, "--help"], capture_output=True, text=True, timeout=60).stdout
    section = out.split("Subcommands:", 1)[-1] if "Subcommands:" in out else ""
    return {m.group(1) for m in re.finditer(r"^\s{2}(\S+)\s", section, re.MULTILINE)}


class Orchid(Runner):
    strategy = "?"
    compile_flags = []

    def __init__(self, model_dir, threads, options):
        super().__init__(model_dir, threads, options)
        self.orchid = os.path.abspath(options.get("orchid", "build/tools/orchid/orchid"))
        self.artifact = os.path.join(model_dir, self.name)

    def input_flags(self):
        return [f for i in self.entry["inputs"]
                for f in ("--input", f"{i['name']}={os.path.join(self.model_dir, 'inputs', i['name'] + '.npy')}")]

    def call(self, args, timeout=3600):
        env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
        out = subprocess.run([self.orchid] + args, capture_output=True, text=True, timeout=timeout, env=env)
        if out.returncode != 0:
            message = (out.stderr or out.stdout).strip().splitlines()
            raise RuntimeError(f"orchid {args[0]} exit {out.returncode}: {message[-1] if message else ''}")
        return out.stdout

    def compile_options(self):
        """The flags every Orchid compile takes: --db where the harness names one (--orchid-db),
        so that Orchid's runtimes share the implementation choices measured there."""
        return ["--db", self.options["db"]] if self.options.get("db") else []

    def load(self):
        if not os.access(self.orchid, os.X_OK):
            raise Unsupported(f"no orchid binary at {self.orchid} (make build)")
        if "compile" not in orchid_subcommands(self.orchid):
            raise Unsupported("`orchid compile` does not exist yet (no 'compile' in `orchid --help`)")
        shutil.rmtree(self.artifact, ignore_errors=True)
        self.call(["compile", self.onnx_path, "-o", self.artifact, "--orchestrate", self.strategy,
                   *self.compile_flags, *self.compile_options()])

    def run(self):
        out_dir = os.path.join(self.artifact, "bench-outputs")
        self.call(["run", self.artifact, *self.input_flags(), "--output-dir", out_dir])
        sanitise = lambda name: re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        return [np.load(os.path.join(out_dir, sanitise(o) + ".npy")) for o in self.entry["outputs"]]

    def time(self, min_s, min_runs, warmup):
        out = self.call(["run", self.artifact, *self.input_flags(), "--bench", "--min-time", str(min_s),
                         "--min-runs", str(min_runs), "--json"])
        try:
            report = json.loads(out)
            self.reported_rss_mb = report.get("peak_rss_mb")
            return [float(t) for t in report["times_ms"]]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise RuntimeError(f"`orchid run --bench --json` printed no times_ms: {e}: {out[:200]}")

    def peak_rss_mb(self):
        """Orchid's own report ("peak_rss_mb" in the --bench JSON) if it gives one; else the
        largest child's ru_maxrss (which may include this worker's size at fork)."""
        reported = getattr(self, "reported_rss_mb", None)
        return reported if reported is not None else resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    def version(self):
        try:
            return subprocess.run([self.orchid, "--version"], capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""


class OrchidPerOp(Orchid):
    name, strategy = "orchid-per-op", "per-op"


class OrchidGreedy(Orchid):
    name, strategy = "orchid-greedy", "greedy"


class OrchidOptimal(Orchid):
    name, strategy = "orchid-optimal", "optimal"


class OrchidSuperopt(Orchid):
    name, strategy, compile_flags = "orchid-superopt", "greedy", ["--superopt"]


class OrchidTuned(Orchid):
    """greedy with the schedule tuner (`--tune-minutes`, the harness's --orchid-tune-minutes);
    its decisions go to the tuning database (--orchid-db, or the user's), so that a later run
    compiles warm: compile_s is then the warm compile's."""
    name, strategy = "orchid-tuned", "greedy"

    def __init__(self, model_dir, threads, options):
        super().__init__(model_dir, threads, options)
        self.compile_flags = ["--tune-minutes", str(options.get("tune_minutes", 3))]
