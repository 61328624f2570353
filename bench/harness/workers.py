"""The harness's side of the worker protocol (bench/peers/worker.py): one process per runtime
and model, asked one JSON command at a time, with a time limit on every answer."""
import json
import os
import selectors
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Worker:
    def __init__(self, python, runtime, model_dir, threads, options, log_path):
        self.runtime, self.log_path = runtime, log_path
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=REPO, PYTHONUNBUFFERED="1")
        args = [python, "-m", "bench.peers.worker", "--runtime", runtime, "--model-dir", model_dir,
                "--threads", str(threads)]
        # Options the harness leaves unset are not passed: "db=None" would name a database "None".
        args += [a for k, v in options.items() if v is not None for a in ("--option", f"{k}={v}")]
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     cwd=REPO, env=env, text=True, bufsize=1)

    def ask(self, cmd: dict, timeout: float) -> dict:
        """The worker's answer, or a failure (timed out, or the process died) with the reason."""
        if self.proc.poll() is not None:
            return self._died()
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sel.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.proc.stdout.readline()
                return json.loads(line) if line else self._died()
        self.kill()
        return {"ok": False, "status": "failed", "reason": f"'{cmd['cmd']}' timed out after {timeout:.0f} s"}

    def _died(self):
        code = self.proc.wait()
        self.log.flush()
        tail = [l.strip() for l in open(self.log_path, errors="replace").read().splitlines() if l.strip()][-2:]
        return {"ok": False, "status": "failed",
                "reason": f"worker exited with code {code}: {' | '.join(tail)[:400]}"}

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.kill()
        self.log.close()
