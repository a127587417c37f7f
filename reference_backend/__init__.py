"""A numpy reference backend for the ONNX max-pooling operators (ai.onnx MaxPool and MaxUnpool).

It is the oracle for the suite's *derived* expectations, so it is itself checked against the
documents' literal examples and against the specification shipped beside it: ``naive.py``,
nested loops over every window element, which shares no code with the fast path
(``maxpool.py``, ``maxunpool.py``) that the backend runs.
Besides numpy it needs ml_dtypes, only for the bfloat16 element type that numpy lacks.
"""

from conformance import __version__  # one version for the distribution

from .backend import InvalidModel, ReferenceBackend, ReferenceRep

__all__ = ["InvalidModel", "ReferenceBackend", "ReferenceRep", "__version__"]
