"""Stage 5, report: the results model (results.json), its markdown and HTML renderings, the
comparison of two runs, the registry page and the coverage report."""
