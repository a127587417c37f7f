"""The documents the cases cite, by their file in ../shared/seeds (a name no reader can look up):
the title and versions each is found by, for the report's citations."""

from __future__ import annotations

TITLES = {
    "000_2109ee78b005a1e1.txt": "onnx's operator page com.ms.internal.nhwc MaxPool (versions 1, 8, 10, 11, 12)",
    "001_a527db407c7feece.txt": "OpenVINO's operation specification MaxPool-1",
    "002_a8d45db0c35040ef.txt": "onnx's operator page MaxUnpool (versions 9, 11, 22)",
    "003_2dfce6e50edc0bf4.txt": "onnx's operator page MaxPool (versions 1, 8, 10, 11, 12, 22)",
    "004_ffa53f35127c706e.txt": "OpenVINO's operation specification MaxPool-8",
}


def cited(document: str, line: int) -> str:
    """A sentence of a document as a report cites it: the document's title, the line, and the
    file that line is in ("onnx's operator page MaxPool (versions ...), line 80 of 003_....txt")."""
    title = TITLES.get(document)
    return f"{title}, line {line} of {document}" if title else f"{document} line {line}"
