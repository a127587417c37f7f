"""Conformance suite for the ONNX max-pooling operator family.

One package per stage of the pipeline: load (case files) -> expand (items) -> backends (run) ->
judge (with semantics) -> report. plugin/ drives it from pytest (entered through pytest_entry.py);
cli.py is the `conformance` command. Importing the package runs nothing.
"""

__version__ = "0.1.0"
