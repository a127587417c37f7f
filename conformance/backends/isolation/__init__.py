"""Process isolation: the backend under test runs in a child process, one item at a time.

A backend that segfaults, aborts, exits, hangs, exhausts its memory or forks processes of its own
then costs one item, reported as ``crash`` or ``timeout``, and a fresh child serves the next one.
The child is a fresh interpreter in a session of its own: when an item ends in a crash or a
timeout, and when the run ends, its whole process group is killed, and a watchdog process in that
group kills it if the runner dies first (even by SIGKILL). The runner waits on the child's
process as well as on its pipe, so a grandchild that keeps the pipe open does not turn a crash
into a timeout.

Nothing a backend returns is unpickled: answers cross the process boundary as a JSON header and
raw buffers (element type, shape, bytes), and the runner builds plain numpy arrays from them.
Without isolation (:class:`~.in_process.InProcessBackend`) answers are copied through the same plain form, so
the judge never holds an object of the backend's. The backend's stdout and stderr go to a pipe of
which the runner keeps the last lines, shown with a crash.

``runner`` is the parent's side (:class:`~.runner.IsolatedBackend`), ``child`` the process that
loads the backend and answers, ``wire`` what crosses between them (frames, element types, the
limits), ``in_process`` the same plain answers without a process (``--isolation=none``), and
``errors`` what a run can end in (the judge reads those from ``conformance.backends``).
"""
