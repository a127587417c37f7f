"""Parameterised cases expand deterministically into named instances."""

from __future__ import annotations

import itertools
import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.load.cases import CaseError, bundled_case_dir, load_case_file, load_registry
from conformance.load.parameters import pairwise, product


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=7))
def test_the_pairwise_design_covers_every_pair_of_values(sizes):
    rows = pairwise(sizes)
    assert all(len(row) == len(sizes) and all(0 <= v < n for v, n in zip(row, sizes)) for row in rows)
    for p, q in itertools.combinations(range(len(sizes)), 2):
        assert {(row[p], row[q]) for row in rows} == set(itertools.product(range(sizes[p]), range(sizes[q])))
    assert len(rows) <= len(product(sizes))
    assert pairwise(sizes) == rows  # deterministic


def test_the_pairwise_design_is_much_smaller_than_the_product():
    sizes = [4, 4, 3, 3, 2, 2, 2]
    assert len(pairwise(sizes)) <= 25 < len(product(sizes))


def load_text(tmp_path, text):
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    return load_case_file(path, load_registry(bundled_case_dir()))


PARAMETERISED = """\
    op: MaxPool
    cases:
      - name: strided
        description: d
        provenance: {generated: a test}
        parameters:
          values:
            geometry:
              - {label: 1d, shape: [1, 1, 5], kernel_shape: [2]}
              - {label: 2d, shape: [1, 1, 4, 4], kernel_shape: [2, 2], pads: [0, 1, 0, 1]}
            ceil_mode: [null, 1]
        attributes: {kernel_shape: $geometry.kernel_shape, pads: $geometry.pads, ceil_mode: $ceil_mode}
        inputs:
          X: {dtype: float32, random: {shape: $geometry.shape, distribution: normal}}
        outputs: {Y: derived}
    """


def test_each_row_becomes_a_named_instance_with_its_values_substituted(tmp_path):
    cases = load_text(tmp_path, PARAMETERISED)
    assert [c.name for c in cases] == ["strided/1d-no_ceil_mode", "strided/1d-ceil_mode1",
                                       "strided/2d-no_ceil_mode", "strided/2d-ceil_mode1"]
    assert cases[0].attributes == {"kernel_shape": [2]}  # a missing field and a null are left out
    assert cases[3].attributes == {"kernel_shape": [2, 2], "pads": [0, 1, 0, 1], "ceil_mode": 1}
    assert cases[3].inputs[0].shape == (1, 1, 4, 4)
    assert all(c.line == 3 for c in cases)


@pytest.mark.parametrize("change, words", [
    (("$geometry.pads", "$geometry.padz"), "no value of geometry has the field 'padz'"),
    (("$ceil_mode}", "$ceiling}"), "no parameter 'ceiling'"),
    (("{label: 1d, ", "{"), "a mapping value needs a `label`"),
    (("[null, 1]", "[1, 1]"), "two values of ceil_mode have the same label"),
    (("kernel_shape: [2]}", "kernel_shape: [2, 2]}"),
     "instance strided/1d-no_ceil_mode: kernel_shape has 2 axes but X has rank 3"),
])
def test_parameter_mistakes_name_the_case_and_field(tmp_path, change, words):
    from conformance.expand.items import expand

    with pytest.raises(CaseError, match=re.escape(words)) as info:
        for case in load_text(tmp_path, PARAMETERISED.replace(*change)):
            for item in expand(case):
                item.model
    assert str(info.value).startswith(str(tmp_path / "cases.yaml"))
