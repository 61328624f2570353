"""Runs every runtime on every model and writes bench/results/<date>-<host>.{json,md,png}.

  python -m bench.harness.run --cache DIR [--models default|all|a,b] [--runtimes ...]

Per model: each runtime starts in its own worker process and loads (compile_s); every
runtime's outputs are checked against onnxruntime's (a mismatch is reported, not timed);
then `--rounds` rounds time the runtimes in turn (A B C A B C ...), each round at least
min-time/rounds seconds and min-runs/rounds runs after a warm-up, so drift hits all alike.
The median, p10 and p90 are over all timed runs. Run by the bench venv's Python.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import socket
import sys
import tempfile
import time

import numpy as np

from bench.models.registry import DEFAULT
from bench.peers.runners import OPT_IN, ORCHID, PEERS
from bench.peers.tvm_runner import TUNED_MARK

from . import machine as machine_info
from . import report
from .stats import compare, roofline_ms, summarize
from .workers import REPO, Worker

REFERENCE = "onnxruntime"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", required=True, help="models exported by bench.models.export")
    ap.add_argument("--models", default="default", help="'default', 'all' or comma-separated names")
    ap.add_argument("--runtimes", default=",".join(n for n in PEERS + ORCHID if n not in OPT_IN))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds timed per runtime and model, in all")
    ap.add_argument("--min-runs", type=int, default=20, help="runs timed per runtime and model, in all")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs before each round's timing")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="max |out - ref| / max |ref| accepted")
    ap.add_argument("--load-timeout", type=float, default=900)
    ap.add_argument("--run-timeout", type=float, default=300)
    ap.add_argument("--orchid", default="build/tools/orchid/orchid")
    ap.add_argument("--orchid-tune-minutes", type=float, default=3, help="orchid-tuned: --tune-minutes per model")
    ap.add_argument("--orchid-db", default=None, help="Orchid's runtimes: their tuning database (default: the user's)")
    ap.add_argument("--tvm-trials", type=int, default=16, help="MetaSchedule trials per task")
    ap.add_argument("--tvm-tune", action="store_true",
                    help="tune TVM where no tuning database exists (slow); otherwise TVM runs only on models "
                         "already tuned at --tvm-trials")
    ap.add_argument("--out-dir", default="bench/results")
    ap.add_argument("--name", default=None, help="results file stem (default <date>-<host>)")
    return ap.parse_args()


def model_names(cache, which):
    manifest = json.load(open(os.path.join(cache, "manifest.json")))
    names = {"default": DEFAULT, "all": list(manifest)}.get(which) or which.split(",")
    missing = [n for n in names if n not in manifest]
    if missing:
        sys.exit(f"bench: not exported to {cache}: {', '.join(missing)} (run bench.models.export)")
    return manifest, names


def tvm_untuned_reason(model_dir, args):
    """Why TVM is skipped on this model, or None: without --tvm-tune it runs only where a
    MetaSchedule database from an earlier tuning run exists."""
    if args.tvm_tune or args.tvm_trials == 0:
        return None
    if any(os.path.exists(os.path.join(model_dir, d, TUNED_MARK))
           for d in os.listdir(model_dir) if d.startswith("tvm-") and d.endswith(f"-{args.tvm_trials}")):
        return None
    return (f"not tuned: no MetaSchedule database at {args.tvm_trials} trials/task for this model "
            f"(tuning takes minutes per task on this machine; `make bench-tune-tvm` tunes)")


class ModelBench:
    """The runs of all runtimes on one model."""

    def __init__(self, name, entry, args, machine, log_dir):
        self.name, self.entry, self.args, self.machine = name, entry, args, machine
        self.model_dir = os.path.join(args.cache, name)
        self.log_dir, self.workers, self.results, self.times = log_dir, {}, {}, {}

    def result(self, runtime, status, **fields):
        self.results[runtime] = {"model": self.name, "runtime": runtime, "status": status, "median_ms": None,
                                 "p10_ms": None, "p90_ms": None, "compile_s": None, "peak_rss_mb": None,
                                 "roofline_ms": None, **self.results.get(runtime, {}), **fields}
        self.results[runtime]["status"] = status

    def fail(self, runtime, answer):
        self.result(runtime, answer["status"], reason=answer["reason"])
        print(f"  {runtime}: {answer['status']}: {answer['reason']}", flush=True)
        worker = self.workers.pop(runtime, None)
        if worker:
            worker.close()

    def load(self, runtimes):
        options = {"orchid": os.path.abspath(self.args.orchid), "tvm_trials": self.args.tvm_trials,
                   "tune_minutes": self.args.orchid_tune_minutes,
                   "db": self.args.orchid_db and os.path.abspath(self.args.orchid_db)}
        for rt in runtimes:
            if rt == "tvm" and tvm_untuned_reason(self.model_dir, self.args):
                self.result(rt, "unsupported", reason=tvm_untuned_reason(self.model_dir, self.args))
                continue
            log = os.path.join(self.log_dir, f"{self.name}.{rt}.log")
            worker = Worker(sys.executable, rt, self.model_dir, self.args.threads, options, log)
            self.workers[rt] = worker
            answer = worker.ask({"cmd": "load"}, self.args.load_timeout)
            if not answer["ok"]:
                self.fail(rt, answer)
                continue
            self.result(rt, "ok", compile_s=answer["compile_s"], version=answer["version"],
                        peak_rss_mb=answer["peak_rss_mb"])
            print(f"  {rt}: loaded in {answer['compile_s']:.1f} s", flush=True)

    def check(self):
        """Outputs of every loaded runtime against onnxruntime's; returns the output bytes."""
        out_root = tempfile.mkdtemp(prefix=f"bench-{self.name}-")
        outputs = {}
        for rt in list(self.workers):
            answer = self.workers[rt].ask({"cmd": "outputs", "dir": os.path.join(out_root, rt)}, self.args.run_timeout)
            if not answer["ok"]:
                self.fail(rt, answer)
                continue
            outputs[rt] = [np.load(os.path.join(out_root, rt, f"{i}.npy")) for i in range(answer["count"])]
        shutil.rmtree(out_root, ignore_errors=True)
        reference = outputs.get(REFERENCE)
        if reference is None:
            for rt in outputs:
                self.results[rt]["reason"] = "not cross-checked: onnxruntime produced no outputs"
            return None
        for rt, outs in outputs.items():
            ok, err, reason = compare(reference, outs, self.args.tolerance)
            self.results[rt]["max_rel_err"] = err
            if not ok:
                self.fail(rt, {"status": "mismatch", "reason": reason})
        return sum(o.nbytes for o in reference)

    def time(self):
        per_round_s = self.args.min_time / self.args.rounds
        per_round_runs = math.ceil(self.args.min_runs / self.args.rounds)
        for _ in range(self.args.rounds):
            for rt in list(self.workers):
                answer = self.workers[rt].ask({"cmd": "time", "min_s": per_round_s, "min_runs": per_round_runs,
                                               "warmup": self.args.warmup}, self.args.run_timeout)
                if not answer["ok"]:
                    self.times.pop(rt, None)
                    self.fail(rt, answer)
                    continue
                self.times.setdefault(rt, []).extend(answer["times_ms"])
                self.results[rt]["peak_rss_mb"] = answer["peak_rss_mb"]
        for rt, times in self.times.items():
            self.results[rt].update(summarize(times))

    def run(self, runtimes):
        print(f"{self.name}:", flush=True)
        ordered = [REFERENCE] + [r for r in runtimes if r != REFERENCE]
        try:
            self.load(ordered)
            output_bytes = self.check()
            self.time()
        finally:
            for w in self.workers.values():
                w.close()
        roof, detail = (None, {}) if output_bytes is None else roofline_ms(self.entry, self.machine, output_bytes)
        rows = []
        for rt in ordered:
            if rt not in runtimes and rt == REFERENCE:
                continue
            r = self.results[rt]
            r["roofline_ms"] = roof
            if r["median_ms"] is not None and roof:
                r["x_roofline"] = r["median_ms"] / roof
                print(f"  {rt}: {r['median_ms']:.3f} ms (p10 {r['p10_ms']:.3f}, p90 {r['p90_ms']:.3f}), "
                      f"{r['x_roofline']:.1f}x roofline", flush=True)
            rows.append(r)
        return rows, detail


def main():
    args = parse_args()
    os.chdir(REPO)
    started = time.time()
    manifest, names = model_names(args.cache, args.models)
    runtimes = args.runtimes.split(",")
    load_start = os.getloadavg()
    machine = machine_info.describe(args.orchid, args.threads)
    print(f"machine: {machine['cpu_model']}, {machine['cores']} cores, DRAM {machine['dram_bandwidth_gbs']} GB/s, "
          f"GEMM {machine['gemm_peak_gflops']} GFLOP/s; load average {load_start}", flush=True)
    stem = args.name or f"{datetime.date.today().isoformat()}-{socket.gethostname()}"
    log_dir = os.path.join(os.path.dirname(os.path.abspath(args.cache)), "bench-logs", stem)
    os.makedirs(log_dir, exist_ok=True)
    os.makedirs(args.out_dir, exist_ok=True)
    doc = {"machine": machine, "results": [], "models": {},
           "run": {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": socket.gethostname(),
                   "threads": args.threads, "rounds": args.rounds, "min_time_s": args.min_time,
                   "min_runs": args.min_runs, "warmup": args.warmup, "tolerance": args.tolerance,
                   "tvm_trials": args.tvm_trials, "models": names, "runtimes": runtimes,
                   "load_average_start": list(load_start), "python": sys.version.split()[0], "logs": log_dir}}
    for name in names:
        load_before = list(os.getloadavg())
        rows, detail = ModelBench(name, manifest[name], args, machine, log_dir).run(runtimes)
        doc["results"] += rows
        doc["models"][name] = {k: manifest[name].get(k) for k in
                               ("family", "note", "inputs", "outputs", "flops", "flops_source", "param_bytes",
                                "primitives")}
        doc["models"][name].update(detail, load_average_start=load_before)
        doc["run"]["load_average_end"] = list(os.getloadavg())
        doc["run"]["duration_s"] = time.time() - started
        report.write(doc, os.path.join(args.out_dir, stem))
    print(f"bench: {len(names)} models in {time.time() - started:.0f} s; "
          f"results in {os.path.join(args.out_dir, stem)}.{{json,md,png}}", flush=True)


if __name__ == "__main__":
    main()
