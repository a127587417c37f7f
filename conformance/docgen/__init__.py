"""The generated parts of the docs, from the cases and the expectations files: the coverage
tables and depth axes (docs/coverage.md), the open questions (cases/ambiguities.md) and the status
per runtime (docs/status.md); tests keep each committed copy equal to what these render."""
