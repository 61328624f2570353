"""The benchmark harness: machine probe, runs of every runtime on every model, report."""
