"""Release sweeps: the suite on every release of each runtime (conformance sweep, bisect)."""
