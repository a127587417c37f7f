"""The benchmarks (`nox -s bench`) and the trial tools that measure the suite on real and broken
backends; each module runs as `python -m bench.NAME` from the repository's root. Their smoke tests
live in tests/ (tests/test_benchmark.py, tests/meta/test_causes.py)."""
