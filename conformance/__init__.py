"""Conformance suite for the ONNX max-pooling operator family."""

__version__ = "0.1.0"
