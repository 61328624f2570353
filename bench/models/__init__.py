"""Benchmark model definitions (torch modules) and their ONNX export; see registry.py."""
