"""Case-file text shared by the tests."""

SMALL_CASE = """\
op: MaxPool
cases:
  - name: small
    description: a 2x2 kernel pools a 2x2 plane to one element
    provenance: {document: test, example: small}
    attributes: {kernel_shape: [2, 2]}
    inputs:
      X: {dtype: float32, data: [[[[1, 2], [3, 4]]]]}
    outputs:
      Y: {data: [[[[4]]]]}
"""
