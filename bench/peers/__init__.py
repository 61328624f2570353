"""Peer runtimes, one module each; every runtime runs in its own worker process (worker.py)."""
