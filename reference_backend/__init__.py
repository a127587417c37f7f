"""A numpy reference backend for the ONNX max-pooling operators (ai.onnx MaxPool and MaxUnpool).

It is the oracle for the suite's *derived* expectations, so it is itself checked in tests/
against the documents' literal examples and against an independent naive loop implementation.
Besides numpy it needs ml_dtypes, only for the bfloat16 element type that numpy lacks.
"""

from conformance import __version__  # one version for the distribution

from .backend import InvalidModel, ReferenceBackend, ReferenceRep

__all__ = ["InvalidModel", "ReferenceBackend", "ReferenceRep", "__version__"]
