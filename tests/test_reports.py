"""Reports: results.json against its schema, the HTML and Markdown renderings, cross-backend
runs, opset regressions, expectations files and the comparison of two runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap

import jsonschema
import pytest

from conformance.cli import main
from conformance.judge.diagnoses import Diagnosis
from conformance.plugin import PACKAGE_DIR
from conformance.report.html import render_html
from conformance.report.plots import PLOTTED_FROM
from tests.conftest import requires_tool
from tests.support.samples import SMALL_CASE

pytest_plugins = ["pytester"]
SCHEMA = json.loads((PACKAGE_DIR / "schema" / "results.schema.json").read_text())
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def run_suite(pytester, *args):
    (pytester.path / "cases").mkdir(exist_ok=True)
    (pytester.path / "cases" / "small.yaml").write_text(SMALL_CASE)
    return pytester.runpytest(str(PACKAGE_DIR), "--cases", str(pytester.path / "cases"), "--isolation=none",
                              "-W", "ignore::pytest.PytestAssertRewriteWarning", *args)


@pytest.fixture
def two_backend_run(pytester):
    result = run_suite(pytester, "--backend=reference,tests.meta.support.faulty_backends:WrongAtVersion12",
                       f"--report={pytester.path / 'out'}")
    return result, pytester.path / "out"


def test_a_run_on_two_backends_gives_one_report_with_a_column_each(two_backend_run):
    result, out = two_backend_run
    result.assert_outcomes(passed=11, failed=1)
    result.stdout.fnmatch_lines(["*MaxPool-12@faulty*1*1*", "*MaxPool-12@reference*1*1*"])
    document = json.loads((out / "results.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert [b["name"] for b in document["environment"]["backends"]] == ["reference", "faulty"]
    assert {(r["backend"], r["outcome"]) for r in document["items"] if r["version"] == 12} == {
        ("reference", "pass"), ("faulty", "fail")}
    failed = next(r for r in document["items"] if r["outcome"] == "fail")
    assert failed["diff"][0]["mask"] == ["x"] and failed["repro"].endswith("--conformance-id 'MaxPool-12/small[float32]'")


def test_the_html_report_shows_regressions_disagreements_and_diffs(two_backend_run):
    _, out = two_backend_run
    page = (out / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "<script" not in page and "http" not in page.split("</style>")[0]
    for heading in ("Opset regressions (1)", "Where the backends disagree (1)", "Failures (1)", "By operator version"):
        assert heading in page
    assert "MaxPool-12/small[float32]" in page
    assert "class='heat'" not in page  # one differing element, which the text names: no map
    summary = (out / "summary.md").read_text()
    assert "## Opset regressions (1)" in summary and "faulty: MaxPool small [float32]: 1: pass" in summary


def expectations(tmp_path, entry):
    path = tmp_path / "expect" / "faulty.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("backend: faulty\nentries:\n" + textwrap.indent(entry, "  "))
    return path.parent


@pytest.mark.parametrize("entry, outcomes", [
    ("- {match: 'MaxPool-12/*', outcome: fail, reason: zeros at 12}\n", {"xfail": 1, "pass": 5}),
    ("- {match: 'MaxPool-*/*', outcome: fail, reason: too broad}\n", {"xfail": 1, "xpass": 5}),
    ("- {match: 'MaxPool-12/*', outcome: error, reason: wrong kind}\n", {"fail": 1, "pass": 5}),
    ("- {match: 'MaxPool-12/*', outcome: fail, reason: blocked, when: {kernels: [plain, blocked]}}\n",
     {"xfail": 1, "pass": 5}),
    ("- {match: 'MaxPool-12/*', outcome: fail, reason: elsewhere, when: {kernels: plain}}\n", {"fail": 1, "pass": 5}),
])
def test_expectations_turn_known_failures_into_xfail_and_stale_entries_into_xpass(pytester, tmp_path, entry, outcomes):
    directory = expectations(tmp_path, entry)
    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", f"--expectations={directory}",
                       f"--report={pytester.path / 'out'}")
    document = json.loads((pytester.path / "out" / "results.json").read_text())
    assert document["summary"] == outcomes
    assert result.ret == (0 if set(outcomes) <= {"pass", "xfail"} else 1)
    if "xpass" in outcomes:
        message = next(r["message"] for r in document["items"] if r["outcome"] == "xpass")
        assert message.startswith("listed as a known fail (too broad) but passes: update ")


def test_the_html_report_lists_known_failures_with_their_cause_and_link(pytester, tmp_path):
    entry = ("- {match: 'MaxPool-12/*', outcome: fail, reason: zeros at 12,"
             " link: 'https://github.com/example/runtime/issues/7'}\n")
    run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12",
              f"--expectations={expectations(tmp_path, entry)}", f"--report={pytester.path / 'out'}")
    page = (pytester.path / "out" / "report.html").read_text()
    known = page.split("id='known'", 1)[1].split("<h2", 1)[0]
    assert "1 xfail" in known and "zeros at 12" in known
    assert "<a href='https://github.com/example/runtime/issues/7'>example/runtime#7</a>" in known


def test_known_failures_are_one_row_per_root_cause_whatever_their_entries(two_backend_run):
    """ORT's MLAS seed showed in five rows (72, 18, 6, 6 and 4 xfail), though its entries all carry
    one cause: a row per cause, with the entries' places."""
    document = json.loads((two_backend_run[1] / "results.json").read_text())
    records = [r for r in document["items"] if r["backend"] == "faulty"][:3]
    for n, r in enumerate(records):
        r.update(outcome="xfail", expectation={"match": r["id"], "outcome": "fail", "reason": f"reason {n}",
                                               "where": f"faulty.yaml:{3 + n}", "cause": "seed_kept" if n < 2 else None})
    known = render_html(document).split("id='known'", 1)[1].split("<h2", 1)[0]
    assert known.count("<tr><td>") == 2 and "<code>seed_kept</code>" in known and "(no cause named)" in known
    assert "2 entries: faulty.yaml:3, faulty.yaml:4" in known and "(and 1 more reasons)" in known


def test_an_expectations_link_that_is_not_http_is_refused_in_one_line(pytester, tmp_path):
    entry = "- {match: 'MaxPool-12/*', outcome: fail, reason: zeros at 12, link: 'javascript:alert(1)'}\n"
    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12",
                       f"--expectations={expectations(tmp_path, entry)}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1 and "faulty.yaml:3: entries[0].link: 'javascript:alert(1)'" in errors[0], errors


def test_the_html_report_makes_links_of_http_addresses_only(two_backend_run):
    document = json.loads((two_backend_run[1] / "results.json").read_text())
    failing = next(r for r in document["items"] if r["outcome"] == "fail")
    for scheme, link in [("javascript", "javascript:alert(1)"), ("data", " data:text/html,<script>x</script>"),
                         ("https", "https://example.org/a'b")]:
        failing.update(outcome="xfail", expectation={"match": "*", "outcome": "fail", "reason": scheme, "link": link})
        known = render_html(document).split("id='known'", 1)[1].split("<h2", 1)[0]
        assert ("<a href=" in known) == (scheme == "https"), known
        assert "<script>" not in known, known
        if scheme == "https":
            assert "href='https://example.org/a&#39;b'" in known, known  # the quote escaped: it cannot end the attribute


def test_compare_reports_regressions_and_fixes_and_exits_on_a_regression(pytester, tmp_path, capsys):
    run_suite(pytester, "--backend=reference", f"--report={pytester.path / 'good'}")
    run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", f"--report={pytester.path / 'bad'}")
    good, bad = pytester.path / "good" / "results.json", pytester.path / "bad" / "results.json"
    # two backends compared (a vendor's runtime against the reference), each run's one backend as "candidate";
    # a regression is grouped by its cause line
    assert main(["compare", str(good), str(bad), "--as", "candidate"]) == 1
    text = capsys.readouterr().out
    assert "## Regressions (1)\n- candidate fail: Y values differ: 1\n  - MaxPool-12/small[float32]: pass -> fail" in text
    assert main(["compare", str(bad), str(good), "--as", "candidate"]) == 0
    assert "## Fixes (1)\n- candidate MaxPool-12: 1" in capsys.readouterr().out
    assert main(["compare", str(good), str(bad)]) == 2  # faulty and reference share no item
    two = pytester.path / "two.json"
    two.write_text(json.dumps({**json.loads(good.read_text()), "environment": {
        **json.loads(good.read_text())["environment"], "backends": 2 * json.loads(good.read_text())["environment"]["backends"]}}))
    assert main(["compare", str(two), str(bad), "--as", "x"]) == 2
    assert "--as compares runs of one backend each; this run has 2" in capsys.readouterr().err


def test_the_report_command_merges_runs_side_by_side(pytester, tmp_path, two_backend_run, capsys):
    _, out = two_backend_run
    whole = json.loads((out / "results.json").read_text())
    runs = []
    for backend in whole["environment"]["backends"]:  # each backend's run, as two runs would write them
        run = {**whole, "environment": {**whole["environment"], "backends": [backend]},
               "items": [r for r in whole["items"] if r["backend"] == backend["name"]]}
        runs.append(tmp_path / f"{len(runs)}.json")
        runs[-1].write_text(json.dumps(run))
    assert main(["report", *map(str, runs), "-o", str(tmp_path / "merged")]) == 0
    assert "Where the backends disagree" in (tmp_path / "merged" / "report.html").read_text()
    assert "warning" not in capsys.readouterr().err  # the same items side by side
    assert main(["report", str(runs[0]), str(runs[0]), "-o", str(tmp_path / "twice")]) == 2  # its items would count twice
    capsys.readouterr()
    fewer = json.loads(runs[1].read_text())
    fewer["items"] = fewer["items"][:2]
    runs[1].write_text(json.dumps(fewer))
    assert main(["report", *map(str, runs), "-o", str(tmp_path / "uneven")]) == 0
    warning = capsys.readouterr().err
    assert warning.startswith("conformance report: warning: the runs hold different items (") and warning.count("\n") == 1


@requires_tool(None if CHROMIUM else "no chromium: apt-get install chromium")
def test_the_html_report_renders_in_headless_chromium(two_backend_run, tmp_path):
    _, out = two_backend_run
    screenshot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600",
                    f"--screenshot={screenshot}", (out / "report.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = screenshot.read_bytes()
    assert image[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(image) > 30_000, "the page rendered (nearly) blank"


def test_a_drafted_expectations_file_turns_exactly_the_failures_into_xfail(pytester, tmp_path):
    out = tmp_path / "run"
    run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", f"--report={out}")
    assert main(["expectations", str(out / "results.json"), "-o", str(tmp_path / "expect" / "faulty.yaml")]) == 0
    drafted = (tmp_path / "expect" / "faulty.yaml").read_text()
    assert "- match: MaxPool-12/*\n  outcome: fail\n  reason: 'Y values differ (for example: Y: 1 of 1 elements differ" in drafted
    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12",
                       f"--expectations={tmp_path / 'expect'}", f"--report={tmp_path / 'again'}")
    assert result.ret == 0
    assert json.loads((tmp_path / "again" / "results.json").read_text())["summary"] == {"xfail": 1, "pass": 5}


def test_the_draft_of_a_real_run_is_short_and_leaves_passing_items_alone(tmp_path):
    """The committed example run (ONNX Runtime's part): the draft needs few globs (under a third of
    the wrong items: today's cut, 124 behind 34; the whole suite's raw run of 2026-11-23, 378
    behind 15), each wrong item matches one with its own outcome, and no passing item matches any."""
    from conformance.judge.expectations import load_expectations
    from conformance.judge.verdict import Verdict
    from conformance.outcomes import FAILING_WORDS, Outcome

    document = json.loads((PACKAGE_DIR.parent / "docs" / "example" / "results.json").read_text())
    assert main(["expectations", str(PACKAGE_DIR.parent / "docs" / "example" / "results.json"),
                 "--backend=ort", "-o", str(tmp_path / "ort.yaml")]) == 0
    drafted = load_expectations(tmp_path / "ort.yaml", "ort")
    wrong = [r for r in document["items"] if r["backend"] == "ort" and r["outcome"] in FAILING_WORDS]
    assert 3 * len(drafted.entries) <= len(wrong)
    for record in (r for r in document["items"] if r["backend"] == "ort"):  # by id, or by the cause of its failure
        found = drafted.find(record["id"], Verdict(Outcome(record["outcome"]), "", diagnosis=[Diagnosis.from_json(d) for d in record.get("diagnosis", [])]))
        if record["outcome"] in ("fail", "error", "crash", "timeout"):
            assert found is not None and found.outcome.value == record["outcome"], record["id"]
        elif record["outcome"] == "pass":
            assert found is None, record["id"]


def test_compare_of_two_runs_sharing_no_item_is_a_usage_error(tmp_path, capsys):
    from conformance.report.writer import Results, environment
    from tests.meta.support.faulty_backends import Raises
    documents = []
    for name, ids in (("old", ["MaxPool-12/a[float32]"]), ("new", ["MaxPool-12/b[float32]"])):
        document = Results(environment([(Raises(), Raises())], 0, tmp_path), None).document(partial=False)
        document["items"] = [{"id": i, "op": "MaxPool", "version": 12, "backend": "faulty", "outcome": "pass",
                              "message": ""} for i in ids]
        documents.append(tmp_path / f"{name}.json")
        documents[-1].write_text(json.dumps(document))
    assert main(["compare", *map(str, documents)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("conformance compare: the runs share no item") and error.count("\n") == 1
    assert main(["compare", str(documents[0]), str(documents[0])]) == 0  # the same run: nothing changed


def test_every_failing_item_has_a_standalone_script_that_fails_on_its_bug(pytester, tmp_path, capsys):
    import subprocess
    import sys
    out = pytester.path / "out"
    run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", f"--report={out}", "-k", "MaxPool-12")
    document = json.loads((out / "results.json").read_text())
    failing = [r for r in document["items"] if r["outcome"] == "fail"]
    assert failing and all(r["script"].startswith("conformance repro ") for r in failing)
    linked = [r for r in failing if "script_file" in r]  # the causes' items the HTML shows
    assert linked and all(f"<a href='{r['script_file']}'>script</a>" in (out / "report.html").read_text() for r in linked)
    runner = "def run(model, feeds):\n    return BACKEND.run(model, feeds)\n"
    from conformance.scripts.runners import GENERIC_RUNNER
    from conformance.backends.onnx_backend import OnnxBackendAdapter
    from reference_backend import ReferenceBackend
    from tests.meta.support.faulty_backends import WrongAtVersion12
    REFERENCE = OnnxBackendAdapter(ReferenceBackend, name="reference")
    script = (out / linked[0]["script_file"]).read_text()
    assert "What the suite saw on faulty" in script and "conformance" not in script.split('"""')[-1]
    assert GENERIC_RUNNER not in script  # a module:Class backend's script imports the adapter itself
    adapter_runner = re.compile(r"ADAPTER = .*?return backend\.run\(model, feeds\)\n", re.S)
    for backend, status in ((WrongAtVersion12(), 1), (REFERENCE, 0)):
        with pytest.raises(SystemExit) as exit_:
            exec(compile(adapter_runner.sub(lambda _: runner, script), "repro.py", "exec"),
                 {"BACKEND": backend, "__name__": "__main__"})
        assert exit_.value.code == status
    # The command rebuilds any item's script from results.json alone (its seed, cases and backend).
    item = failing[-1]["id"]
    assert main(["repro", item, "--results", str(out / "results.json"), "-o", str(tmp_path / "again.py")]) == 0
    assert "What the suite saw" in (tmp_path / "again.py").read_text()
    cases = document["environment"]["cases"]
    assert main(["repro", item, "--backend=ort", "--cases", cases, "-o", str(tmp_path / "ort.py")]) == 0
    written = subprocess.run([sys.executable, str(tmp_path / "ort.py")], capture_output=True, text=True)
    assert "import onnxruntime" in (tmp_path / "ort.py").read_text() and written.returncode in (0, 1)
    assert main(["repro", "MaxPool-12/no_such_case[float32]", "--backend=ort"]) == 2
    assert capsys.readouterr().err.startswith("conformance repro: no item MaxPool-12/no_such_case[float32]")


@pytest.mark.parametrize("item_id", ["MaxPool-12/negative_pads[float32]", "MaxPool-12/infinities/1d-y[float32]"])
def test_a_script_for_a_runtime_it_does_not_run_says_so_and_exits_2(item_id, tmp_path):
    """The stub of a backend without a runner is no refusal: a must-reject item's script must not
    say "refused, as it should" and exit 0, nor a valid item's report a bug."""
    from conformance.load.cases import bundled_case_dir
    from conformance.scripts.items import find_item
    from tests.support.bundled import bundled_script

    script = tmp_path / "repro.py"
    script.write_text(bundled_script(find_item(item_id, bundled_case_dir()), "my.module:Runtime"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (2, "fill in run(): run the model on your runtime and return "
                                                          "its outputs in order")


def test_repro_for_an_adapter_it_cannot_import_says_what_to_set_in_one_line(tmp_path, capsys):
    """`conformance repro` is asked for one script, for that runtime: where its module cannot be
    found, one line that says so beats a stub that exits 2."""
    assert main(["repro", "MaxPool-12/2d_ceil[float32]", "--backend=not_here.mod:Runtime", "-o", str(tmp_path / "r.py")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("conformance repro: --backend=not_here.mod:Runtime: cannot import not_here.mod from here: ")
    assert "PYTHONPATH" in error and error.count("\n") == 1 and not (tmp_path / "r.py").exists()


def test_a_results_json_is_shown_in_its_own_run_s_words(tmp_path, capsys):
    """The report reads each model's title from the document's catalogue, never from today's
    analysis: a run of another day shows that day's titles. Every model the items name is in it."""
    document = json.loads((PACKAGE_DIR.parent / "docs" / "example" / "results.json").read_text())
    named = {m["model"] + (f":{m['constant']}" if "constant" in m else "")
             for r in document["items"] for d in r.get("diagnosis", []) for m in d["models"]}
    assert named and named | {n for r in document["items"] for n in r.get("retyped", [])} <= set(document["catalogue"])
    today = {name: entry["title"] for name, entry in document["catalogue"].items()}
    for name, entry in document["catalogue"].items():
        entry["title"] = f"the title of its day for {name}"
    (tmp_path / "old.json").write_text(json.dumps(document))
    assert main(["report", str(tmp_path / "old.json"), "-o", str(tmp_path / "out")]) == 0
    for page in ("summary.md", "report.html"):
        text = (tmp_path / "out" / page).read_text()
        assert "the title of its day for " in text and not [t for t in today.values() if t in text], page


def test_the_record_type_is_the_schema_s_item():
    """conformance/report/record.py's ItemRecord names every field the schema's item has, and no other."""
    from typing import get_type_hints

    from conformance.report.record import ItemRecord

    item = SCHEMA["$defs"]["item"]
    assert set(get_type_hints(ItemRecord)) == set(item["properties"])
    assert set(item["required"]) <= set(get_type_hints(ItemRecord))


def test_what_a_backend_runs_none_of_is_one_sentence_at_the_top_and_at_the_end(pytester):
    """A domain, else an operator's versions, of which a backend ran no item (each unsupported):
    one sentence atop report.html and summary.md, and at the end of the terminal run."""
    from conformance.report.results import refused_whole

    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:SupportsNothing", f"--report={pytester.path / 'out'}")
    sentence = "SupportsNothing cannot run ai.onnx (6 items)"
    result.stdout.fnmatch_lines([f"conformance: {sentence}"])
    page = (pytester.path / "out" / "report.html").read_text()
    assert page.index(sentence) < page.index("<h2")  # above every section
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert summary.index(f"**{sentence}.**") < summary.index("| backend |")
    record = {"backend": "rt", "domain": "ai.onnx", "op": "MaxPool", "message": ""}
    document = {"environment": {"backends": [{"name": "rt", "version": "1", "details": {}, "title": "My Runtime"}]},
                "items": [{**record, "id": f"MaxPool-{v}/c{n}", "version": v, "outcome": o}
                          for v, o in ((12, "pass"), (22, "unsupported"), (8, "unsupported")) for n in range(2)]
                         + [{**record, "id": "x", "domain": "com.x", "op": "com.x.P", "version": 1, "outcome": "unsupported"}]}
    assert refused_whole(document) == ["My Runtime cannot run MaxPool-8, 22 (4 items)", "My Runtime cannot run com.x (1 item)"]


def test_each_failure_line_says_new_with_a_draft_or_known_with_the_entries_that_name_its_cause():
    """A failure whose cause an applied entry names (a model of the items it took as known
    failures) is known: the entry's place, and these items are not listed. Another is new, with
    an entry drafted to paste. A line that only says "Y values differ" is never known by that."""
    from conformance.report.known import report_model
    from conformance.report.results import render_markdown
    from tests.support.named import written

    def record(n: int, outcome: str, **more) -> dict:
        return {"id": f"MaxPool-12/c{n}[float32]", "case": f"c{n}", "file": "cases/x.yaml", "op": "MaxPool", "domain": "ai.onnx", "version": 12,
                "backend": "rt", "outcome": outcome, "message": "Y: 1 of 4 elements differ", "attributes": {},
                "inputs": [{"name": "X", "shape": [1, 1, 4], "dtype": "float32"}],
                "diff": [{"output": "Y", "summary": "Y: 1 of 4 elements differ"}], **more}

    entry = {"match": "MaxPool-12/c0[float32]", "outcome": "fail", "reason": "zero padding", "where": "expectations/rt.yaml:4",
             "cause": "padding_is_zero"}
    items = [record(0, "xfail", diagnosis=[written("padding_is_zero")], expectation=entry),
             record(1, "fail", diagnosis=[written("padding_is_zero")]),
             record(2, "fail"), record(3, "xfail", expectation={**entry, "match": "MaxPool-12/c3*", "cause": None})]
    document = {"schema_version": 2, "partial": False, "interrupted": False, "started": "s", "finished": "f",
                "environment": {"backends": [{"name": "rt", "version": "1", "details": {}}], "onnx": "1", "numpy": "1",
                                "python": "3", "platform": "p", "seed": 0, "cases": "c", "suite_version": "0"},
                "summary": {}, "collection_errors": [], "items": items,
                "catalogue": {"padding_is_zero": {"title": "padding takes part with 0", "order": 0, "composite": False,
                                                  "retypes": False}}}
    clusters, advice = report_model(document)
    said = {line.signature: advice["rt", line.signature] for line in clusters["rt"]}
    (known,) = [a for a in said.values() if a.known]
    assert [e["where"] for e in known.entries] == ["expectations/rt.yaml:4"]
    (new,) = [a for a in said.values() if not a.known]  # "Y values differ": no entry names that cause
    assert "- match: MaxPool-*/c2[[]*\n  outcome: fail\n" in new.draft
    page = render_html(document, clusters, advice)
    assert "<b>Known cause</b> <code>padding_is_zero</code>: expectations/rt.yaml:4 names it" in page
    assert "<b>New</b>: no entry of the expectations names this cause" in page and "match: MaxPool-*/c2" in page
    summary = render_markdown(document, clusters, advice)
    assert "- rt: known, not listed: 1 × " in summary and "- rt: new: 1 × " in summary


def _fetches(page: str) -> list[str]:
    """What a page would load: a script, a stylesheet, an image, a frame, a source, a style's url()
    (an <a href> is a link a person follows, not a fetch; an SVG <use href="#..."> and an image
    of data: stay inside)."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Loads(HTMLParser):
        def handle_starttag(self, tag, attrs):
            values = dict(attrs)
            inline = (values.get("xlink:href") or values.get("href") or "").startswith("data:")  # a heatmap's pixels
            if tag in ("script", "link", "img", "iframe", "object", "embed", "image", "audio", "video", "source") and not inline:
                found.append(tag)
            for name in ("src", "srcset", "data", "poster"):
                if values.get(name):
                    found.append(f"{tag} {name}")
            if tag == "use" and not (values.get("xlink:href") or values.get("href") or "#").startswith("#"):
                found.append("use")

    Loads().feed(page)
    return found + re.findall(r"url\(\s*['\"]?(?!#)[^)]*\)|@import", page)


def test_every_report_has_its_plots_inline_and_fetches_nothing():
    """Outcomes per operator version, failures per cause (new against known), and the unsupported
    heatmap: one inline SVG each, with no script and nothing fetched."""
    document = json.loads((PACKAGE_DIR.parent / "docs" / "example" / "results.json").read_text())
    document["items"] = document["items"][:600]  # three backends' failures and unsupported items: a fifth of the run
    page = render_html(document)
    plots = page.split("<h2 id='plots'>", 1)[1].split("<h2", 1)[0]
    assert plots.count("<figure class='plot'><svg") == 3
    for title in ("outcomes per operator version", "failing items per cause", "share of items unsupported"):
        assert title in plots, title
    assert _fetches(page) == [] and "<script" not in page
    assert render_html(document) == page  # one run, one page: no date, no random ids in the SVG


@pytest.mark.parametrize("items", [PLOTTED_FROM - 1, PLOTTED_FROM])
def test_a_run_of_fewer_items_than_the_plots_threshold_gets_a_note_instead(items):
    document = json.loads((PACKAGE_DIR.parent / "docs" / "example" / "results.json").read_text())
    document["items"] = document["items"][:items]
    plots = render_html(document).split("<h2 id='plots'>", 1)[1].split("<h2", 1)[0]
    assert ("<svg" in plots) == (items >= PLOTTED_FROM)
    assert ("No plots for a run of" in plots) == (items < PLOTTED_FROM)


def _failing_lines(count: int) -> dict:
    """A run of one backend with ``count`` failure lines, each an error of its own words."""
    words = ["abcdefghijklmnopqrstuvwxyz"[n % 26] * (n // 26 + 1) for n in range(count)]  # no digits: one line each
    items = [{"id": f"MaxPool-12/c{n}[float32]", "case": f"c{n}", "file": "cases/x.yaml", "op": "MaxPool",
              "domain": "ai.onnx", "version": 12, "backend": "rt", "outcome": "error",
              "message": f"RuntimeError: check {words[n]} failed", "attributes": {},
              "inputs": [{"name": "X", "shape": [1, 1, 4], "dtype": "float32"}]} for n in range(count)]
    return {"environment": {"backends": [{"name": "rt", "version": "1", "details": {}}]}, "items": items, "catalogue": {}}


def test_as_many_lines_as_the_limit_get_a_drafted_entry(monkeypatch):
    from conformance.report import known

    monkeypatch.setattr(known, "DRAFTED_LINES", 3)
    clusters, advice = known.report_model(_failing_lines(4))
    assert len(clusters["rt"]) == 4
    assert [bool(advice["rt", line.signature].draft) for line in clusters["rt"]] == [True, True, True, False]


def test_as_many_cause_lines_as_the_limit_are_drawn(monkeypatch):
    from conformance.report import plots
    from conformance.report.causes import failure_clusters

    monkeypatch.setattr(plots, "PLOTTED_CAUSES", 3)
    document = _failing_lines(4)
    drawn = plots._causes(failure_clusters(document["items"], {}), set())
    assert drawn.count("check ") == 3  # each bar's label names its line's words


def test_the_progress_says_once_per_domain_that_its_u_s_are_refusals(pytester):
    """A run of thousands of "u" looks like a hang: the first of each domain says what it is."""
    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:SupportsNothing")
    said = [line for line in result.outlines if line.startswith("conformance: SupportsNothing declares it cannot run")]
    # no twin: the valid item itself was declared unsupported
    assert len(said) == 1 and "cannot run MaxPool-1/small[float32]: each 'u' of ai.onnx is a declared refusal" in said[0], said


def test_a_difference_map_is_drawn_where_the_text_does_not_name_every_difference():
    from conformance.report.html import CELL_PX, WIDE_CELL_PX, WIDE_COLUMNS, _heatmap

    def diff(columns: int, wrong: int, shown: int) -> dict:
        row = ["x"] * wrong + ["."] * (columns - wrong)
        return {"output": "Y", "mask": [row], "plane": [0, 0], "shown": ["Y[...]"] * shown}

    assert _heatmap(diff(8, 3, 3)) is None  # the text lists all three
    assert _heatmap(diff(8, 4, 3))["size"] == CELL_PX
    assert _heatmap(diff(WIDE_COLUMNS, 9, 3))["size"] == CELL_PX
    assert _heatmap(diff(WIDE_COLUMNS + 1, 9, 3))["size"] == WIDE_CELL_PX


def test_summary_md_cuts_a_long_title_and_keeps_the_model_names():
    from conformance.report.results import shorten_keeping_names

    names = {"nan_compared_as_mlas_pools", "nan_never_selected_seed_kept", "output_size_truncated",
             "kernel_clipped_to_padded_input", "unpool_indices_per_plane", "unpool_summed_per_plane"}
    title = "fail: reproduced exactly by a defect model: " + "a long title " * 20
    line = f"{title}(nan_compared_as_mlas_pools, nan_never_selected_seed_kept); 3 of its items with another defect model"
    cut = shorten_keeping_names(line, 160, names)
    assert len(cut) <= 160 and cut.endswith("… (nan_compared_as_mlas_pools, nan_never_selected_seed_kept)"), cut
    assert shorten_keeping_names("fail: Y values differ", 160, names) == "fail: Y values differ"
    either = ("fail: reproduced exactly by a defect model: " + "the first title " * 8 + "(output_size_truncated); or "
              + "the second title " * 8 + "(kernel_clipped_to_padded_input)")
    cut = shorten_keeping_names(either, 160, names)
    assert len(cut) <= 160 and cut.endswith("… (output_size_truncated; kernel_clipped_to_padded_input)"), cut
    # prose in brackets, as the catalogue's own titles have it, is no name
    planes = ("fail: reproduced exactly by a defect model: each index counts within each (n, c) plane "
              + "of the output " * 8 + "(unpool_indices_per_plane); or summed within each (n, c) plane "
              + "again " * 8 + "(unpool_summed_per_plane)")
    cut = shorten_keeping_names(planes, 160, names)
    assert cut.endswith("(unpool_indices_per_plane; unpool_summed_per_plane)") and "n, c;" not in cut, cut
    prose = "fail: reproduced exactly by a defect model: " + "a maximum as in C++ (std::max) " * 6 + "(nan_compared_as_mlas_pools)"
    assert shorten_keeping_names(prose, 160, names).endswith("… (nan_compared_as_mlas_pools)")
