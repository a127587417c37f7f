"""Case files are read as they are written: integers exactly (never through float64), invalid
geometry as the author's one-line error, locations and names that cannot lie, ``derive`` kept
inside the case directory, ``.yml`` loaded, a broken registry that does not stop the run, and an
export that survives long labels and malformed files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from conformance.cli import main
from conformance.expand.items import expand
from conformance.load.cases import CaseError, bundled_case_dir, load_case_file, load_registry
from conformance.load.dtypes import DTYPES
from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

pytest_plugins = ["pytester"]
INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("dtype, values", [
    ("int64", [INT64_MAX, -(2**63), 2**53 + 1, -(2**53) - 1]),
    ("int32", [2**31 - 1, -(2**31), 16777217]),
    ("int8", [127, -128]),
    ("uint8", [255, 0]),
])
def test_integer_literals_are_taken_exactly(dtype, values):
    array = DTYPES[dtype].cast([values])
    assert array.dtype == DTYPES[dtype].numpy and [int(v) for v in array[0]] == values


@pytest.mark.parametrize("dtype, value", [("int64", 2**63), ("int64", -(2**63) - 1), ("int32", 2**31),
                                          ("int8", 128), ("uint8", -1)])
def test_an_integer_that_does_not_fit_its_type_is_refused(dtype, value):
    with pytest.raises(ValueError, match=f"{dtype} values must lie in .*, not {value}$"):
        DTYPES[dtype].cast([[value]])


def test_a_finite_literal_that_overflows_a_float_type_is_refused():
    with pytest.raises(ValueError, match="float16 values must lie within ±65504: 70000 overflows"):
        DTYPES["float16"].cast([70000.0])
    assert np.isinf(DTYPES["float16"].cast([float("inf")])).all()  # .inf is written on purpose


def test_the_int64_extremes_reach_the_items_exactly():
    registry = load_registry(bundled_case_dir())
    unpool = next(c for c in load_case_file(bundled_case_dir() / "maxunpool_invalid.yaml", registry)
                  if c.name == "index_int64_max")
    assert int(expand(unpool)[0].case_inputs(0)["I"].max()) == INT64_MAX  # not -2^63 via float64
    extremes = next(c for c in load_case_file(bundled_case_dir() / "openvino_maxpool_edges.yaml", registry)
                    if c.name == "integer_type_extremes/int64")
    item = expand(extremes)[0]
    assert item.case_inputs(0)["X"][0, 0, 3] == 2**53 + 1
    assert item.outputs[0].expected.tolist() == [[[INT64_MAX, 2**53 + 1, -INT64_MAX]]]


def write(tmp_path, text, name="cases.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def load(path):
    return [item for case in load_case_file(path, load_registry(bundled_case_dir())) for item in expand(case)]


def test_invalid_geometry_without_reject_is_the_case_authors_one_line_error(tmp_path):
    path = write(tmp_path, SMALL_CASE.replace("kernel_shape: [2, 2]}", "kernel_shape: [2, 2], strides: [0, 1]}"))
    with pytest.raises(CaseError) as info:
        load(path)
    assert str(info.value) == (f"{path}:6: cases[0].attributes.strides: strides [0, 1]: each is at least 1; for a "
                               "model meant to be invalid, write a must-reject case: `reject: <reason>`, no expected outputs")


def test_the_same_geometry_as_a_must_reject_case_loads(tmp_path):
    text = SMALL_CASE.replace("kernel_shape: [2, 2]}", "kernel_shape: [2, 2], strides: [0, 1]}").replace(
        "    outputs:\n      Y: {data: [[[[4]]]]}\n", "    versions: [12]\n    reject: a stride of 0 moves no window\n")
    assert [item.id for item in load(write(tmp_path, text))] == ["MaxPool-12/small[float32]"]


def test_a_nul_byte_and_a_non_utf8_byte_are_reported_at_their_line(tmp_path):
    for junk, words in ((b"\x00", "unacceptable character #x0000"), (b"\xe9", "not UTF-8 text")):
        path = tmp_path / "junk.yaml"
        path.write_bytes(SMALL_CASE.encode().replace(b"a 2x2 kernel", b"a 2x2 " + junk + b"kernel"))
        with pytest.raises(CaseError, match=words) as info:
            load(path)
        assert info.value.line == 4


def test_70_levels_of_nesting_are_reported_as_nesting_not_as_ragged(tmp_path):
    path = write(tmp_path, SMALL_CASE.replace("data: [[[[1, 2], [3, 4]]]]", "data: " + "[" * 70 + "1" + "]" * 70))
    with pytest.raises(CaseError, match="levels of nesting, over the limit yaml_depth=64") as info:
        load(path)
    assert info.value.line == 8 and "ragged" not in str(info.value)


@pytest.mark.parametrize("name", ["/etc/passwd", "../cases.yaml", "sub/other.yaml", "notes.txt"])
def test_derive_reads_only_case_files_beside_its_own(tmp_path, name):
    text = SMALL_CASE.replace("op: MaxPool\n", "op: MaxPool\ndomain: com.ms.internal.nhwc\n") \
        + f"derive: {{files: [{json.dumps(name)}]}}\n"
    path = write(tmp_path, text)
    with pytest.raises(CaseError, match="derive takes the names of case files") as info:
        load(path)
    assert info.value.field == "derive.files[0]"


def test_a_file_name_with_a_newline_cannot_fake_a_location(tmp_path):
    path = write(tmp_path, "", name="x.yaml:1: all good\nreal.yaml")
    with pytest.raises(CaseError) as info:
        load(path)
    assert "\n" not in str(info.value) and "x.yaml:1: all good\\nreal.yaml:1: the file is empty" in str(info.value)


def test_yml_files_run_and_a_broken_registry_leaves_the_other_files_running(pytester):
    cases = pytester.path / "cases"
    cases.mkdir()
    (cases / "good.yml").write_text(SMALL_CASE)
    (cases / "ambiguities.yaml").write_text("broken: [\n")
    result = pytester.runpytest(str(PACKAGE_DIR), "--cases", str(cases), "-W", "ignore::pytest.PytestAssertRewriteWarning")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 6 and outcomes.get("errors", outcomes.get("error")) == 1
    output = result.stdout.str()
    assert f"{cases / 'ambiguities.yaml'}:2: YAML error" in output and "Traceback" not in output


def test_a_limit_option_is_namespaced_checked_and_applied(pytester):
    cases = pytester.path / "cases"
    cases.mkdir()
    (cases / "good.yaml").write_text(SMALL_CASE)
    refused = pytester.runpytest(str(PACKAGE_DIR), "--cases", str(cases), "--conformance-limit", "taps=3")
    assert "4 window taps, over the limit taps=3" in refused.stdout.str()
    mistyped = pytester.runpytest(str(PACKAGE_DIR), "--cases", str(cases), "--conformance-limit", "tap=3")
    assert mistyped.ret == pytest.ExitCode.USAGE_ERROR
    assert "no limit 'tap'" in mistyped.stderr.str()


def test_export_shortens_a_long_label_with_a_hash_and_reports_a_malformed_file_in_one_line(tmp_path, capsys):
    cases = tmp_path / "cases"
    cases.mkdir()
    label = "l" * 9000
    (cases / "long.yaml").write_text(SMALL_CASE.replace("name: small\n", "name: small\n    parameters:\n      values:\n"
                                                        f"        k: [{{label: {label}, v: 1}}]\n"))
    (cases / "malformed.yaml").write_text("op: MaxPool\ncases: 1\n")
    target = tmp_path / "export"
    assert main(["export", str(target), "--cases", str(cases)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"{cases / 'malformed.yaml'}:2: cases: must be of type array\n"
    assert "wrote 6 tests" in captured.out and "1 malformed case files left out" in captured.out
    names = [test["test"].split("/")[1] for test in json.loads((target / "manifest.json").read_text())["tests"]]
    assert len(names) == 6 and all(len(name) <= 120 for name in names) and len(set(names)) == 6
    assert all((target / "judged" / name / "model.onnx").is_file() for name in names)
    shutil.rmtree(target)


def test_invalid_geometry_is_a_collection_error_of_the_report_not_an_item_error(pytester):
    cases = pytester.path / "cases"
    cases.mkdir()
    (cases / "good.yaml").write_text(SMALL_CASE)
    (cases / "stride_0.yaml").write_text(SMALL_CASE.replace("kernel_shape: [2, 2]}", "kernel_shape: [2, 2], strides: [0, 1]}"))
    result = pytester.runpytest(str(PACKAGE_DIR), "--cases", str(cases), "--report", str(pytester.path / "report"))
    document = json.loads((pytester.path / "report" / "results.json").read_text())
    assert [e["message"] for e in document["collection_errors"]] == [
        f"{cases / 'stride_0.yaml'}:6: cases[0].attributes.strides: strides [0, 1]: each is at least 1; for a model "
        "meant to be invalid, write a must-reject case: `reject: <reason>`, no expected outputs"]
    assert {r["outcome"] for r in document["items"]} == {"pass"} and len(document["items"]) == 6
    assert "suite error" not in result.stdout.str()
