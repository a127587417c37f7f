"""The open questions of the documents as switches: each registry entry of
``cases/ambiguities.yaml`` is a question here, each of its interpretations a reading.

A :class:`Readings` value says which reading to follow for every question; ``Readings()`` is the
default, the one the registry names ``reference`` and the reference backend computes with.
``tests/test_semantics.py`` keeps this table and the registry equal.
"""

from __future__ import annotations

from typing import Mapping

# question id -> its readings, the default first
QUESTIONS: dict[str, tuple[str, ...]] = {
    "ceil-window-starts-in-padding": ("drop-window-starting-past-input", "formula-as-printed"),
    "auto-pad-with-ceil-mode": ("auto-pad-formula", "ceil-mode-applies"),
    "same-pad-negative": ("clamp-to-zero", "negative-split", "negative-split-floor", "negative-split-lower-plus-one",
                          "rejected"),
    "nan-in-window": ("nan-propagates", "nan-ignored", "nan-never-selected"),
    "window-in-padding-only": ("lowest-and-minus-one", "rejected"),
    "storage-order-scope": ("spatial-column-major", "tensor-column-major"),
    "pads-with-auto-pad": ("rejected", "pads-ignored", "auto-pad-ignored"),
    "auto-pad-empty-string": ("rejected", "notset"),
    "same-description-vs-formula": ("formula", "same-as-input"),
    "maxunpool-output-shape-index-space": ("output-index-space", "inferred-shape-embedded"),
    "maxunpool-duplicate-indices": ("last-write-wins", "first-write-wins"),
    "signed-zero-tie": ("first-in-window", "positive-zero", "last-in-window"),
    "maxunpool-output-shape-smaller": ("accepted", "rejected"),
    "maxunpool-output-shape-batch-channels": ("accepted", "rejected"),
    "nhwc-indices": ("channels-first", "channels-last-shape", "channels-last-positions"),
    "nhwc-activation": ("clamp", "ignore-unknown"),
    "nhwc-activation-8-bit": ("clamped", "ignored"),
    "openvino-1-formula-parentheses": ("whole-span-divided", "as-printed"),
    "openvino-valid-ceil": ("rounding-applies", "valid-formula"),
    "openvino-same-output-size": ("ceil-division", "input-size", "rounding-after-same-pads"),
    "openvino-window-without-element": ("minus-infinity-no-index", "lowest-finite-plane-start"),
    "openvino-zero-stride-or-dilation": ("rejected", "allowed"),
    "negative-output-size": ("rejected", "empty-axis"),
    "openvino-kernel-exceeds-padded-input": ("rejected", "formula"),
}

REJECTED = "rejected"  # a reading under which the model is invalid: refusing it is an answer


class UnknownReading(ValueError):
    pass


class Readings:
    """One reading per question; only those that differ from the default are stored."""

    __slots__ = ("_chosen",)

    def __init__(self, chosen: Mapping[str, str] | None = None):
        chosen = dict(chosen or {})
        for question, reading in chosen.items():
            if question not in QUESTIONS:
                raise UnknownReading(f"no open question {question!r} (known: {', '.join(QUESTIONS)})")
            if reading not in QUESTIONS[question]:
                raise UnknownReading(f"{question} has no reading {reading!r} (it has {', '.join(QUESTIONS[question])})")
        self._chosen = {q: r for q, r in sorted(chosen.items()) if r != QUESTIONS[q][0]}

    @classmethod
    def parse(cls, text: str) -> "Readings":
        """``question:reading;question:reading`` (the form ``reference[readings=...]`` takes)."""
        pairs = {}
        for part in filter(None, (p.strip() for p in text.split(";"))):
            question, colon, reading = part.partition(":")
            if not colon:
                raise UnknownReading(f"{part!r} is not question:reading")
            pairs[question.strip()] = reading.strip()
        return cls(pairs)

    def __getitem__(self, question: str) -> str:
        return self._chosen.get(question, QUESTIONS[question][0])

    def differing(self) -> dict[str, str]:
        return dict(self._chosen)

    def __str__(self) -> str:
        return ";".join(f"{q}:{r}" for q, r in self._chosen.items())

    def __repr__(self) -> str:
        return f"Readings({self._chosen!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Readings) and self._chosen == other._chosen

    def __hash__(self) -> int:
        return hash(tuple(self._chosen.items()))


DEFAULT = Readings()


def alternatives(question: str) -> tuple[str, ...]:
    """The readings of ``question`` other than the default."""
    return QUESTIONS[question][1:]

