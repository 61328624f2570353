"""One runtime on one model, in its own process, driven by the harness over a pipe:

  python -m bench.peers.worker --runtime NAME --model-dir DIR --threads N [--option K=V ...]

Reads one JSON command per line on stdin and answers one JSON line on the original stdout
(everything the runtime itself prints goes to stderr):
  {"cmd": "load"}                                  -> {"ok", "compile_s", "version"}
  {"cmd": "outputs", "dir": D}                     -> writes D/<i>.npy, {"ok", "count"}
  {"cmd": "time", "min_s", "min_runs", "warmup"}   -> {"ok", "times_ms", "peak_rss_mb"}
  {"cmd": "quit"}
A failure answers {"ok": false, "status": "unsupported" | "failed", "reason": ...}.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

from .base import Unsupported
from .runners import RUNNERS


def answer(channel, message):
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def handle(runner, cmd):
    if cmd["cmd"] == "load":
        t0 = time.perf_counter()
        runner.load()
        return {"ok": True, "compile_s": time.perf_counter() - t0, "version": runner.version(),
                "peak_rss_mb": runner.peak_rss_mb()}
    if cmd["cmd"] == "outputs":
        outs = runner.run()
        os.makedirs(cmd["dir"], exist_ok=True)
        for i, o in enumerate(outs):
            np.save(os.path.join(cmd["dir"], f"{i}.npy"), np.asarray(o))
        return {"ok": True, "count": len(outs)}
    if cmd["cmd"] == "time":
        times = runner.time(cmd["min_s"], cmd["min_runs"], cmd["warmup"])
        return {"ok": True, "times_ms": times, "peak_rss_mb": runner.peak_rss_mb()}
    raise ValueError(f"unknown command {cmd['cmd']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", required=True, choices=sorted(RUNNERS))
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--option", action="append", default=[], help="K=V passed to the runner")
    args = ap.parse_args()
    channel = os.fdopen(os.dup(1), "w")  # the protocol's channel; fd 1 now goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    options = dict(o.split("=", 1) for o in args.option)
    runner = None
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            break
        try:
            if runner is None:
                runner = RUNNERS[args.runtime](args.model_dir, args.threads, options)
            answer(channel, handle(runner, cmd))
        except Unsupported as e:
            answer(channel, {"ok": False, "status": "unsupported", "reason": str(e)})
        except Exception as e:  # any runtime error becomes the result's reason
            traceback.print_exc()
            answer(channel, {"ok": False, "status": "failed", "reason": f"{type(e).__name__}: {e}"[:500]})


if __name__ == "__main__":
    main()
