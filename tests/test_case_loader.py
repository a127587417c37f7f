"""A broken case file gets one error naming its file, the offending line and the field."""

from __future__ import annotations

import textwrap

import pytest

from conformance.expand.items import expand
from conformance.load.cases import CaseError, bundled_case_dir, load_case_file, load_registry
from tests.support.samples import SMALL_CASE


def load(tmp_path, text: str):
    """Load and expand ``text``; return the CaseError and the line marked ``# <-``."""
    text = textwrap.dedent(text)
    marked = [n for n, line in enumerate(text.splitlines(), 1) if "# <-" in line]
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    registry = load_registry(bundled_case_dir())
    with pytest.raises(CaseError) as info:
        for case in load_case_file(path, registry):
            expand(case)
    error = info.value
    assert str(error).startswith(f"{path}:{error.line}:")
    return error, (marked[0] if marked else None)


def test_the_valid_case_loads(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text(SMALL_CASE)
    (case,) = load_case_file(path, load_registry(bundled_case_dir()))
    assert [item.id for item in expand(case)] == [
        f"MaxPool-{v}/small[float32]" for v in (1, 8, 10, 11, 12, 22)
    ]
    assert case.line == 3


@pytest.mark.parametrize(
    "text, field, words",
    [
        pytest.param(
            SMALL_CASE.replace("  - name: small", "  - name: small: big  # <-"),
            "", "YAML error", id="yaml-syntax",
        ),
        pytest.param(SMALL_CASE.replace("op: MaxPool", "op: MaxPool\nflavour: 1  # <-"), "flavour", "unknown field", id="unknown-top-field"),
        pytest.param(SMALL_CASE.replace("op: MaxPool", "op: AveragePool  # <-"), "op", "unknown operator", id="unknown-op"),
        pytest.param(
            SMALL_CASE.replace("    provenance: {document: test, example: small}\n", ""),
            "cases[0]", "'provenance' is required", id="missing-provenance",
        ),
        pytest.param(
            SMALL_CASE.replace("{kernel_shape: [2, 2]}", "{kernel_shape: [2, 2], kernal: 1}  # <-"),
            "cases[0].attributes.kernal", "no attribute 'kernal'", id="unknown-attribute",
        ),
        pytest.param(
            SMALL_CASE.replace("{kernel_shape: [2, 2]}", "{kernel_shape: 2}  # <-"),
            "cases[0].attributes.kernel_shape", "must be ints, not int", id="attribute-kind",
        ),
        pytest.param(
            SMALL_CASE.replace("{dtype: float32,", "{dtype: float31,  # <-\n").replace("  # <-\n data", " data"),
            "cases[0].inputs.X.dtype", "float31", id="unknown-dtype",
        ),
        pytest.param(
            SMALL_CASE.replace("[[[[1, 2], [3, 4]]]]}", "[[[[1, 2], [3]]]]}  # <-"),
            "cases[0].inputs.X.data", "ragged", id="ragged-data",
        ),
        pytest.param(
            SMALL_CASE.replace("{dtype: float32, data: [[[[1, 2], [3, 4]]]]}", "{dtype: uint8, data: [[[[1, 2], [3, 300]]]]}  # <-"),
            "cases[0].inputs.X.data", "[0, 255]", id="uint8-out-of-range",
        ),
        pytest.param(
            SMALL_CASE + "  - name: small  # <-\n    description: d\n    provenance: {document: t, example: e}\n"
                         "    attributes: {kernel_shape: [1]}\n    inputs: {X: {dtype: float32, data: [[[1]]]}}\n"
                         "    outputs: {Y: derived}\n",
            "cases[1].name", "duplicate case name", id="duplicate-name",
        ),
        pytest.param(
            SMALL_CASE.replace("    outputs:", "    inputs: {}  # <-\n    outputs:"),
            "cases[0].inputs", "duplicate key", id="duplicate-key",
        ),
        pytest.param(
            SMALL_CASE.replace("data: [[[[1, 2], [3, 4]]]]}", "data: !!python/object/apply:os.system [echo]}  # <-"),
            "", "YAML error", id="python-tag",
        ),
        pytest.param(
            SMALL_CASE.replace("      Y: {data: [[[[4]]]]}", "      Y: {data: [[[[4]]]]}\n    reject: the model is invalid"),
            "cases[0].outputs", "must be of type array: The node's outputs (names only)", id="outputs-and-reject",
        ),
        pytest.param(
            SMALL_CASE + "    ambiguity: no-such-thing  # <-\n",
            "cases[0].ambiguity", "no ambiguity 'no-such-thing'", id="unknown-ambiguity",
        ),
        pytest.param(
            SMALL_CASE.replace("    attributes:", "    versions: [7]  # <-\n    attributes:"),
            "cases[0].versions[0]", "no version 7", id="unknown-version",
        ),
        pytest.param(
            SMALL_CASE.replace("    attributes: {kernel_shape: [2, 2]}", "    versions: [8]  # <-\n    attributes: {kernel_shape: [2, 2], ceil_mode: 1}"),
            "cases[0].versions", "MaxPool-8 has no attribute ceil_mode", id="version-where-case-is-illegal",
        ),
        pytest.param(
            SMALL_CASE.replace("{dtype: float32, data: [[[[1, 2], [3, 4]]]]}", "{dtype: int8, random: {shape: [1, 1, 2, 2], distribution: normal}}  # <-"),
            "cases[0].inputs.X.random.distribution", "needs integers", id="normal-for-integers",
        ),
        pytest.param(
            SMALL_CASE.replace("      Y: {data: [[[[4]]]]}", "      Y: {dtype: float16, data: [[[[4]]]]}  # <-"),
            "cases[0].outputs.Y.dtype", "T is float32", id="output-dtype-mismatch",
        ),
    ],
)
def test_a_broken_case_names_file_line_and_field(tmp_path, text, field, words):
    error, marked_line = load(tmp_path, text)
    assert words in error.message
    assert error.field == field
    if marked_line is not None:
        assert error.line == marked_line


@pytest.mark.parametrize("content, words", [(b"", "empty"), (b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8")])
def test_empty_and_binary_files_are_refused(tmp_path, content, words):
    path = tmp_path / "junk.yaml"
    path.write_bytes(content)
    with pytest.raises(CaseError, match=words) as info:
        load_case_file(path, {})
    assert info.value.line == 1


def test_the_bundled_registry_and_cases_load():
    registry = load_registry(bundled_case_dir())
    assert "maxunpool-output-shape-index-space" in registry
    for file in sorted(bundled_case_dir().glob("*.yaml")):
        if file.name != "ambiguities.yaml":
            for case in load_case_file(file, registry):
                assert expand(case) or case.derived_from  # a derived case may fit nowhere in its operator


def test_an_erratum_keeps_the_printed_output_beside_the_corrected_one(tmp_path):
    path = tmp_path / "cases.yaml"
    erratum = ("    erratum:\n"
               "      printed: {Y: {data: [[[[3]]]]}}\n"
               "      reason: the document prints 3, the second-largest element\n")
    path.write_text(SMALL_CASE + erratum)
    (case,) = load_case_file(path, load_registry(bundled_case_dir()))
    assert case.erratum["printed"] == {"Y": {"data": [[[[3]]]]}}
    assert [o.expected.tolist() for o in expand(case)[0].outputs] == [[[[[4.0]]]]]


NHWC_HEADER = """\
op: MaxPool
domain: com.ms.internal.nhwc
derive:
  files: [FILES]
cases:
  - name: own
    description: a case of its own
    provenance: {generated: a test}
    attributes: {kernel_shape: [2]}
    inputs:
      X: {dtype: float32, data: [[[1, 2, 3]]]}
    outputs: {Y: derived}
"""


def derived_file(tmp_path, files="small.yaml"):
    (tmp_path / "small.yaml").write_text(SMALL_CASE)
    path = tmp_path / "nhwc.yaml"
    path.write_text(NHWC_HEADER.replace("FILES", files))
    return path


def test_derived_cases_run_the_named_files_for_this_operator(tmp_path):
    own, derived = load_case_file(derived_file(tmp_path), load_registry(bundled_case_dir()))
    assert (derived.domain, derived.name, derived.derived_from) == ("com.ms.internal.nhwc", "small", "small.yaml:3")
    assert [item.id for item in expand(derived)] == [
        f"com.ms.internal.nhwc.MaxPool-{v}/small[float32]" for v in (1, 8, 10, 11, 12)]


@pytest.mark.parametrize("files, words", [
    ("missing.yaml", "no other case file missing.yaml"),
    ("nhwc.yaml", "no other case file nhwc.yaml"),
])
def test_a_derive_naming_no_other_file_is_an_error(tmp_path, files, words):
    with pytest.raises(CaseError, match=words) as info:
        load_case_file(derived_file(tmp_path, files), load_registry(bundled_case_dir()))
    assert info.value.field == "derive.files[0]"


def test_a_derived_case_may_not_share_a_name_with_an_own_case(tmp_path):
    path = derived_file(tmp_path)
    path.write_text(path.read_text().replace("name: own", "name: small"))
    with pytest.raises(CaseError, match="small.yaml has a case small, as this file does"):
        load_case_file(path, load_registry(bundled_case_dir()))


def test_a_documented_example_must_name_a_derived_case(tmp_path):
    path = derived_file(tmp_path)
    path.write_text(path.read_text().replace("  files: [small.yaml]", "  files: [small.yaml]\n  documented:\n"
                                             "    document: d.txt\n    examples: {large: {example: e, line: 3}}"))
    with pytest.raises(CaseError, match="no derived case is named large") as info:
        load_case_file(path, load_registry(bundled_case_dir()))
    assert info.value.field == "derive.documented.examples.large"
