"""Case-file text, and a helper for the processes they interrupt, shared by the tests."""

import signal


def ctrl_c_restored() -> None:
    """Popen's preexec_fn for a process a test interrupts: SIGINT back to its default, since a test
    run started in the background (`.ci/run &`) passes Ctrl-C on ignored, and Python then installs
    no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
