"""Conformance suite for the ONNX max-pooling operator family.

One package per stage of the pipeline: load (case files) -> expand (items) -> backends (run) ->
judge (with semantics) -> report. plugin/ drives it from pytest; cli.py is the `conformance` command.
"""

__version__ = "0.1.0"
