"""Failures grouped by cause, from the records alone: one line per root cause a run shows (a
defect model's name, a type, a shape rule, the runtime's own diagnostic, a class of window, a
failed valid twin), each with its items; the report, the scripts, the drafted expectations and the
fuzz all read the lines from here, so a cause has one name everywhere."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..judge.diagnoses import Diagnosis, Model
from ..outcomes import FAILING_WORDS, Outcome
from .record import ItemRecord, catalogue_of

Record = ItemRecord
# results.json's "catalogue": each model its run named, by name (title, family, family_title,
# composite, retypes, order): what the lines read of the models, in the words of the run's own day.
Catalogue = Mapping[str, Mapping[str, Any]]


def diagnoses(record: Record) -> list[Diagnosis]:
    """The record's diagnoses, typed."""
    return [Diagnosis.from_json(d) for d in record.get("diagnosis") or []]


def title(diagnosis: Diagnosis, catalogue: Catalogue) -> str:
    """A diagnosis as a report line reads it: its models' titles joined by "and" (several bugs at
    once), with the reading each was found under."""
    def one(model) -> str:
        text = catalogue.get(model.plain, {}).get("title", model.plain)
        return f"{text} (under the reading {model.reading})" if model.reading else text

    return " and ".join(one(m) for m in diagnosis.models)


def detail_signature(record: Record) -> str:
    """What a failure looks like in detail, the same for every item one bug hits in one way: the
    outcome and the message with what varies from item to item made generic (counts, positions,
    shapes, lines, bit patterns: "Y: # of # elements differ; Y[…]: expected -inf (0x#), got -#.#e+#
    (0x#)") and without the open questions it names (a difference no reading gives is no question's).
    Special values stay apart from numbers: -inf, nan and -3.4e+38 are different details."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x#", record.get("message", ""))
    text = re.sub(r"no reading of [a-z0-9, -]+?(?= gives|;|$)", "no reading", text)
    text = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "#", text)
    text = re.sub(r"\[#(, #)*\]", "[…]", text)
    return f"{record['outcome']}: " + " ".join(text.split())


# What an output's difference is, from its summary in the record's diff.
DIFFERENCES = (("element type", "element type differs"), ("shape", "shape differs"),
               ("indices do not point at their window's maximum", "indices miss their window's maximum"),
               ("elements differ", "values differ"))
ACCEPTED = "accepted an invalid model"
ELEMENT_TYPE_NAMES = re.compile(r"\b(u?int(8|16|32|64)(_t)?|b?float(16|32|64)?|double|half|bool|[fiu](8|16|32|64)|bf16)\b")


DIAGNOSED = "reproduced exactly by a defect model: "


def diagnosed_signature(outcome: str, found: list[Diagnosis], catalogue: Catalogue) -> str:
    """A diagnosed line: its diagnoses' titles, each with its name (several where each reproduces
    every item of the line: the items cannot tell them apart)."""
    return f"{outcome}: {DIAGNOSED}" + "; or ".join(f"{title(d, catalogue)} ({d.name})" for d in found)


def cause_signature(record: Record, diagnosis: Diagnosis | None = None, catalogue: Catalogue | None = None) -> str:
    """A diagnosed failure's cause is its defect model (``diagnosis``: the one its line is named
    after, ``line_diagnoses``; by default the record's first), whatever outputs it touched.

    Otherwise: what differs structurally, the same for every item one root bug hits however its values,
    signs and element types vary: the first output that differs and how (its values, its form, its
    indices), and the class of window its wrong elements share (``where``: NaN, over padding...); for a
    refusal, a crash or an accepted invalid model, the message without numbers, element types,
    quotes or parenthesized details, and whether the model was an invalid one. Nothing in it names an open question: no item's difference
    depends on one where no reading gives it."""
    found = diagnoses(record)
    if found:
        return diagnosed_signature(record["outcome"], [diagnosis or found[0]],
                                   catalogue_of([record]) if catalogue is None else catalogue)
    # a wrong element type is a cause of its own (its line: _add_retyped_lines): the values' line
    # is what differs besides it
    diffs = [d for d in record.get("diff") or [] if not (record.get("retyped") and " element type " in d["summary"])]
    if diffs:
        first = diffs[0]
        kind = next((label for words, label in DIFFERENCES if words in first["summary"]), "differs")
        where = f" in {record['where']}" if record.get("where") else ""
        return f"{record['outcome']}: {first['output']} {kind}{where}"
    if record.get("message", "").startswith(ACCEPTED):  # one missing check or many: the rule is the detail
        # Each domain's models are checked by code of its own (OpenVINO: the ONNX frontend for
        # ai.onnx, its core for its own opset), so a domain is a line of its own.
        domain = record.get("domain", "ai.onnx")
        return f"{record['outcome']}: {ACCEPTED}" + ("" if domain in ("", "ai.onnx") else f" of domain {domain}")
    invalid = " on an invalid model" if record.get("expected") == "reject" else ""  # a check missing, not a kernel bug
    return f"{record['outcome']}{invalid}: " + generic_words(diagnostic(record))


def generic_words(text: str) -> str:
    """A runtime's words about a refusal or crash, the same for every item one check refuses: its
    failed check's code, its status prefix, operator names, paths, numbers, shapes, quotes,
    parenthesized details and element types made generic (the fuzz names its kinds by these too)."""
    text = re.sub(CHECK_FAILED, "", text)  # the code of a failed check, where its message follows it
    text = re.sub(ORT_STATUS, "", text)
    text = re.sub(r"\b(?:Nhwc)?Max(?:Pool|Unpool)\b", "<op>", text)  # one check, met by two operators
    text = re.sub(r"(?:[A-Za-z]:)?(?:/[\w.+@-]+){2,}", "<path>", text)  # a file path, anywhere in it
    text = re.sub(r"\b0x[0-9a-fA-F]+\b", "#", text)
    text = re.sub(r"\[[^\]]*\]", "[…]", text)  # a command line, a shape
    text = re.sub(r"\{[^{}]*\}", "{…}", text)  # a shape as C++ prints it
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\([^()]*\)", "(…)", text)
    text = ELEMENT_TYPE_NAMES.sub("<type>", text)
    return " ".join(re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "#", text).split())


# A failed check as C++ runtimes report it: its source location, its function and its condition
# (ONNX Runtime's ORT_ENFORCE: "pool_attributes.h:124 onnxruntime::...SetOutputSize(...) const
# input_shape.Size() > 0 || ... was false. Invalid input shape."). The code differs between the
# kernels that share a check; the message after it is the runtime's own words.
CHECK_FAILED = re.compile(r"\S+\.(?:h|hh|hpp|c|cc|cpp|cxx):\d+\s.*? was false\.\s*(?=\S)")
# ONNX Runtime's status before its message ("Fail: [ONNXRuntimeError] : 1 : FAIL : "): its class and
# code for one check change between releases (RUNTIME_EXCEPTION up to 1.23, FAIL since).
ORT_STATUS = re.compile(r"^[\w.]+: \[ONNXRuntimeError\] : \d+ : \w+ : ")
# Lines a runtime writes before its error that say nothing of it: its warnings and a traceback's frames.
NOISE = re.compile(r"(?i)^(?:warning\b|\S*warning:|w\d{4}\b|\[w |unknown cpu vendor|traceback \(most recent call|"
                   r"file \"|raised at |\^+$|during handling of|the above exception|the backend's output meanwhile)")
# Lines that carry a runtime's own diagnostic: a compiler's error lines, a panic and its payload.
SPECIFIC = re.compile(r"(?i)(?:^|\s)error(?:\[\w+\])?:|panicked at|^thread '[^']*' panicked|assertion .* failed")


def diagnostic(record: Record) -> str:
    """The runtime's own words about a refusal or crash: the message's first line, and where the
    whole text (``reason``) says more, the first line after it that carries a diagnostic (a
    compiler's ``error:`` line, a panic's payload): a first line that every failure of a tool
    shares ("Error invoking ... compiler tool") then tells its causes apart. Warnings and a
    traceback's frames are passed over."""
    message = record.get("message", "")
    lines = [line.strip() for line in (record.get("reason") or message).splitlines() if line.strip()]
    lines = [line for line in lines if not NOISE.match(line)]
    first = next((line for line in message.splitlines() if line.strip() and not NOISE.match(line.strip())),
                 lines[0] if lines else message)
    later = next((line for line in lines if SPECIFIC.search(line) and line not in first), None)
    return f"{first} … {later}" if later else first


@dataclass
class Cluster:
    """Failing items of one backend with one cause signature, sub-grouped by detail signature."""

    backend: str
    signature: str
    records: list[Record]

    @property
    def details(self) -> list[tuple[str, int]]:
        """Its sub-groups: each detail signature and its item count, the largest first."""
        return Counter(detail_signature(r) for r in self.records).most_common()

    @property
    def diagnosed(self) -> bool:
        return DIAGNOSED in self.signature

    @property
    def smallest(self) -> Record:
        """The smallest item of the line's largest sub-group: an example of its majority, of the
        items that carry the line's cause alone where some do."""
        alone = [r for r in self.records if not several_causes(r)] or self.records  # the line's cause alone, where shown
        majority = Counter(detail_signature(r) for r in alone).most_common(1)[0][0]
        own = [r for r in alone if detail_signature(r) == majority]
        return min(own, key=lambda r: (sum(math.prod(i["shape"]) for i in r.get("inputs", [])), len(r["id"])))

    @property
    def op_versions(self) -> list[str]:
        return [f"{op}-{v}" for op, v in sorted({(r["op"], r["version"]) for r in self.records})]

    @property
    def dtypes(self) -> list[str]:
        return sorted({i["dtype"] for r in self.records for i in r.get("inputs", [])[:1]})

    @property
    def common_attributes(self) -> dict[str, Any]:
        """Attribute values every item of the cluster shares: a hint of what matters."""
        first = self.records[0].get("attributes", {})
        return {k: v for k, v in first.items() if all(r.get("attributes", {}).get(k) == v for r in self.records)}


def line_diagnoses(records: list[Record], catalogue: Catalogue) -> dict[tuple[str, str], Diagnosis]:
    """(backend, id) -> the diagnosis whose line a diagnosed record joins: of those that
    reproduce it, the one that reproduces most of its backend's records of its own operator and
    version (a runtime picks its kernel per node: ort-js runs MaxPool-1 on its CPU provider and
    MaxPool-8 on WebGPU), then most of all its records (a family's models counted
    together), a model of one bug before
    a composite one (two bugs in one kernel) that also does. A record only pairs (or
    three models) reproduce joins the line of the pair's rarer model, counted over the records
    whose diagnosis names it alone or with others (two bugs at once: the rarer is what sets the
    item apart; the other has its own line); but a model that pools in another type (float64
    through float32) only carries the other's bug into that type, and the item joins the other's line."""
    def entry(model: Model) -> Mapping[str, Any]:
        return catalogue.get(model.plain, {})

    def kin(model: Model) -> str:  # a model of a family counts with its family: one bug in several kernels
        return entry(model).get("family") or model.plain

    def group(d: Diagnosis) -> str:  # one model found under the documents' readings: its family's
        return kin(d.models[0]) if len(d.models) == 1 and d.models[0].reading is None else d.name

    def node(r: Record) -> tuple:  # the kernel a runtime registers: per operator and version
        return r.get("domain"), r.get("op"), r.get("version")

    found = {(r["backend"], r["id"]): diagnoses(r) for r in records if r.get("diagnosis")}
    reach: Counter = Counter((backend, g) for (backend, _), ds in found.items() for g in {group(d) for d in ds})
    reach_at: Counter = Counter((r["backend"], node(r), g) for r in records if r.get("diagnosis")
                                for g in {group(d) for d in found[r["backend"], r["id"]]})
    named: Counter = Counter((backend, g) for (backend, _), ds in found.items()
                             for g in {kin(m) for d in ds for m in d.models})

    def line(r: Record) -> Diagnosis:
        backend, ds = r["backend"], found[r["backend"], r["id"]]
        best = max(ds, key=lambda d: (not any(entry(m).get("composite") for m in d.models),
                                      reach_at[backend, node(r), group(d)], reach[backend, group(d)], -ds.index(d)))
        if len(best.models) == 1:
            return best
        parts = [Model(m.name, constant=m.constant) for m in best.models]
        carried = [part for part in parts if not entry(part).get("retypes")]
        return Diagnosis((min(carried or parts, key=lambda part: (named[backend, kin(part)], parts.index(part))),))

    return {(r["backend"], r["id"]): line(r) for r in records if r.get("diagnosis")}


def without_readings(diagnosis: Diagnosis) -> Diagnosis:
    """A diagnosis's models without the readings of open questions it was found under: the model is
    the bug, the reading only which answer the documents allow the runtime chose."""
    return Diagnosis(tuple(Model(m.name, constant=m.constant) for m in diagnosis.models))


def failure_clusters(items: list[Record], catalogue: Catalogue | None = None) -> dict[str, list[Cluster]]:
    """Each backend's failing items clustered by cause: diagnosed items by defect model (the models
    of one family, one bug in several kernels, share a line), the others by cause signature; the
    diagnosed lines first, then the largest. An item that several models reproduce joins the line
    of the one that reproduces most of the backend's items. ``catalogue``: the document's (records
    judged in this process: this process's catalogue)."""
    failing = [r for r in items if r["outcome"] in FAILING_WORDS]
    catalogue = catalogue_of(failing) if catalogue is None else catalogue
    chosen = line_diagnoses(failing, catalogue)
    grouped: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in failing:
        line = chosen.get((r["backend"], r["id"]))
        plain = without_readings(line) if line else None
        family = catalogue.get(plain.plain, {}).get("family") if plain and len(plain.models) == 1 else None
        if r.get("twin"):  # the minimal valid model fails too: that is the line, whatever the item is
            key = twin_signature(r)
        elif family:
            key = f"{r['outcome']}: {DIAGNOSED}{catalogue[plain.plain]['family_title']}"  # type: ignore[union-attr]
        else:
            key = cause_signature(r, plain, catalogue)
        grouped[r["backend"], key].append(r)
    for (backend, signature), records in list(grouped.items()):  # name every model that reproduces the whole line
        if DIAGNOSED in signature:
            grouped[backend, _line_named(signature, records, [chosen[backend, r["id"]] for r in records], catalogue)] = (
                grouped.pop((backend, signature)))
    _add_retyped_lines(grouped, failing, catalogue)
    _name_failed_twins(grouped)
    _split_by_deciding_attributes(grouped, items)
    _merge_refusals_by_deciding_attributes(grouped, items)
    _split_checked_domains_by_rule(grouped)
    _name_explained_lines(grouped)
    clusters: dict[str, list[Cluster]] = defaultdict(list)
    for (backend, signature), records in sorted(grouped.items(), key=lambda kv: (
            kv[0][0], DIAGNOSED not in kv[0][1], -len(kv[1]), kv[0][1])):
        clusters[backend].append(Cluster(backend, signature, records))
    return dict(clusters)


def _line_named(signature: str, records: list[Record], chosen: list[Diagnosis], catalogue: Catalogue) -> str:
    """A diagnosed line's name: every diagnosis that reproduces each of its items, and how many of
    them carry a second model or were found under a reading."""
    names = list(dict.fromkeys(without_readings(d) for d in chosen))
    found = [diagnoses(r) for r in records]
    shared = [d for d in found[0] if d not in names and all(d in ds for ds in found)]
    if catalogue.get(names[0].plain, {}).get("family") and len(names[0].models) == 1:
        renamed = f"{signature} ({', '.join(sorted(d.name for d in names + shared))})"
    else:
        renamed = diagnosed_signature(records[0]["outcome"], [names[0], *shared], catalogue) if shared else signature
    paired = sum(1 for ds in found if not set(names) & {without_readings(d) for d in ds})
    if paired:  # two bugs at once: the other model has a line of its own
        renamed += f"; {paired} of its items with another defect model (each item's diagnosis names both)"
    read = sum(1 for d in chosen if any(m.reading for m in d.models))
    if read and read < len(records):
        renamed += f"; {read} of its items under a reading of an open question (each item's diagnosis names it)"
    return renamed


def several_causes(record: Record) -> bool:
    """Whether the item carries a wrong element type beside wrong values: it sits on both lines."""
    retyped = record.get("retyped") or []
    return bool(retyped) and [[m.plain for m in d.models] for d in diagnoses(record)] != [retyped]


def _add_retyped_lines(grouped: dict[tuple[str, str], list[Record]], failing: list[Record], catalogue: Catalogue) -> None:
    """An item answered in another element type and with wrong values joins its type's line too
    (its values' line holds it already): a cause's line counts every item it explains."""
    for r in failing:
        if r.get("twin") or not several_causes(r):
            continue
        for name in r["retyped"]:
            signature = diagnosed_signature(r["outcome"], [Diagnosis((Model(name),))], catalogue)
            key = next((k for k in grouped if k[0] == r["backend"] and k[1].startswith(signature)), (r["backend"], signature))
            grouped[key].append(r)


def failing_items(clusters: Iterable[Cluster]) -> int:
    """How many items the lines hold, each once (an item with two causes sits on two lines)."""
    return len({(c.backend, r["id"]) for c in clusters for r in c.records})


MINIMAL = "fails on the minimal valid model of "
# A twin's id: Op-version/valid_twin/rank<R>-<inputs>-<outputs>[<element type>]
_TWIN_PARTS = re.compile(r"^(?P<op>.+)-(?P<version>\d+)/valid_twin/rank(?P<rank>\d+)-(?P<inputs>[^-\[]*)-(?P<outputs>[^\[]*)"
                         r"\[(?P<dtype>[^\]]+)\]$")


def twin_signature(record: Record) -> str:
    """The line of an item whose valid twin the backend fails too with no declared refusal: the
    twin's failure made generic as any refusal's or crash's is (``cause_signature``), per operator
    and output set (two kernels that fail in the same words stay apart), named in full by
    ``_name_failed_twins`` once the line's twins are known. A panic on every MaxPool with Indices is
    one line, however many items, versions, ranks and element types it hits."""
    twin = record["twin"]
    found = _TWIN_PARTS.match(twin["id"])
    model = f"{found['op']} (outputs {found['outputs']})" if found else twin["id"]  # one operator and output set a line
    return f"{MINIMAL}{model}…: " + cause_signature({"outcome": twin["outcome"], "message": twin["message"]})


def failed_twin_lines(items: list[Record]) -> list[str]:
    """One line per backend and failure of minimal valid models (``twin_signature``), with its item
    count: the bugs the valid twins showed, for the end of a run beside what it cannot run."""
    grouped: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in items:
        if r.get("twin"):
            grouped[r["backend"], twin_signature(r)].append(r)
    _name_failed_twins(grouped)
    return [f"{backend}: {len(records)} item{'s' if len(records) != 1 else ''}: {signature}"
            for (backend, signature), records in sorted(grouped.items())]


def _name_failed_twins(grouped: dict[tuple[str, str], list[Record]]) -> None:
    """Each line of failed twins named by the minimal valid models it holds (per operator and output
    set: the versions, ranks and element types) and by the runtime's own words for the first."""
    for (backend, signature), records in list(grouped.items()):
        if not signature.startswith(MINIMAL):
            continue
        twins = sorted({r["twin"]["id"] for r in records})
        per_model: dict[tuple[str, str], tuple[set[int], set[int], set[str]]] = {}
        for twin in twins:
            found = _TWIN_PARTS.match(twin)
            if found:
                versions, ranks, dtypes = per_model.setdefault((found["op"], found["outputs"].replace("_", ", ")),
                                                               (set(), set(), set()))
                versions.add(int(found["version"]))
                ranks.add(int(found["rank"]))
                dtypes.add(found["dtype"])
        models = "; ".join(f"{op}-{', '.join(map(str, sorted(v)))} {', '.join(sorted(d))} rank {', '.join(map(str, sorted(k)))} "
                           f"(outputs {outputs})" for (op, outputs), (v, k, d) in sorted(per_model.items()))
        first = min(records, key=lambda r: r["twin"]["id"])["twin"]
        words = diagnostic({"message": first["message"]})
        named = f"{first['outcome']}: {MINIMAL}{models or ', '.join(twins)}: {words}"
        grouped.setdefault((backend, named), []).extend(grouped.pop((backend, signature)))


def _split_by_deciding_attributes(grouped: dict[tuple[str, str], list[Record]], items: list[Record]) -> None:
    """Each undiagnosed line of valid models split by its deciding attributes (``deciding.py``),
    against the items of its operators that its backend ran; a line one predicate holds whole is
    named by it ("crash: ... where ceil_mode 1")."""
    from .deciding import split

    ran: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in items:
        if r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.SKIPPED.value):
            ran[r["backend"], r["op"]].append(r)
    for (backend, signature), records in list(grouped.items()):
        if DIAGNOSED in signature or MINIMAL in signature or any(r.get("expected") == "reject" for r in records):
            continue
        parts = split(records, [r for op in sorted({r["op"] for r in records}) for r in ran[backend, op]])
        if len(parts) > 1 or parts[0][0] is not None:  # a predicate that holds the whole line names it too
            del grouped[backend, signature]
            for predicate, part in parts:
                grouped[backend, f"{signature} where {predicate}" if predicate else signature] = part


def _split_checked_domains_by_rule(grouped: dict[tuple[str, str], list[Record]]) -> None:
    """A line of invalid models a backend ran, split by the rule each breaks, where none of them lies
    outside its version's signature. A runtime that runs a model its operator's schema excludes (an
    attribute or element type the version lacks, an attribute of the wrong kind) checks the domain
    against no schema: what it runs is one missing step, a rule of it a sub-group. One that refused
    every such model has a check, and each rule it lets through is a gap of its own (OpenVINO's core:
    negative pads_begin and index_element_type i16 are two). Items share a rule where they cite one
    sentence or come from cases of one name (MaxPool's and MaxUnpool's negative_pads: one check, two
    documents)."""
    for (backend, signature), records in list(grouped.items()):
        if (not signature.startswith(f"{Outcome.FAIL.value}: {ACCEPTED}") or any(r.get("breach") for r in records)
                or not all(r.get("rule") for r in records)):
            continue
        del grouped[backend, signature]
        for part in _sharing_a_rule(records):
            words = min((r["message"].removeprefix(f"{ACCEPTED}: ") for r in part), key=lambda m: (len(m), m))
            rules = "; ".join(sorted({r["rule"] for r in part} - {words}))
            grouped[backend, f"{signature}: {words}" + (f" ({rules})" if rules else "")] = part


def _sharing_a_rule(records: list[Record]) -> list[list[Record]]:
    """``records`` in groups joined by a cited rule or a case name (its variant left out)."""
    group_of: dict[str, int] = {}
    groups: list[list[Record]] = []
    for r in records:
        keys = (f"rule {r['rule']}", f"case {r['case'].split('/')[0]}")
        found = sorted({group_of[k] for k in keys if k in group_of})
        if not found:
            groups.append([])
            found = [len(groups) - 1]
        target = found[0]
        for other in found[1:]:  # r joins two groups: one rule
            groups[target] += groups[other]
            groups[other] = []
            group_of.update({k: target for k, g in group_of.items() if g == other})
        groups[target].append(r)
        group_of.update({k: target for k in keys})
    return [g for g in groups if g]


def _merge_refusals_by_deciding_attributes(grouped: dict[tuple[str, str], list[Record]], items: list[Record]) -> None:
    """Each backend's refusal and crash lines of valid models (one per runtime diagnostic) that
    one deciding predicate holds exactly, merged (``deciding.merge``): one cause the runtime words
    in several ways; each diagnostic stays a sub-group of the line."""
    from .deciding import merge

    ran: dict[str, list[Record]] = defaultdict(list)
    for r in items:
        if r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.SKIPPED.value):
            ran[r["backend"]].append(r)
    for backend in sorted({b for b, _ in grouped}):
        for outcome in (Outcome.ERROR.value, Outcome.CRASH.value):
            lines = {signature: records for (b, signature), records in grouped.items()
                     if b == backend and signature.startswith(f"{outcome}: ") and DIAGNOSED not in signature
                     and MINIMAL not in signature
                     and all(r.get("expected") != "reject" for r in records)}
            ops = {r["op"] for records in lines.values() for r in records}
            # Held against the valid items only: an invalid model's refusal is its pass, not this cause.
            valid = [r for r in ran[backend] if r["op"] in ops and r.get("expected") != "reject"]
            for predicate, keys in merge(lines, valid):
                records = [r for key in keys for r in grouped.pop((backend, key))]
                grouped[backend, f"{outcome} where {predicate}: {len(keys)} diagnostics of the runtime"] = records


EXPLAINED = "lines whose experiments agree: "  # what was measured, not a cause proven


def _name_explained_lines(grouped: dict[tuple[str, str], list[Record]]) -> None:
    """Each line explained by experiment (``explain/``) named with what its probes measured; lines
    whose records carry one key (a group of lines whose experiments agree, ``explain/lines.py``)
    are one line, named with the group's words, each former line named in it."""
    by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (backend, signature), records in grouped.items():
        keys = {(r.get("explanation") or {}).get("key", "") for r in records}
        if len(keys) == 1 and "" not in keys:
            by_key[backend, keys.pop()].append(signature)
    for (backend, _), signatures in by_key.items():
        lines = sorted(((s, grouped.pop((backend, s))) for s in signatures), key=lambda line: (-len(line[1]), line[0]))
        signature, records = lines[0]
        text = records[0]["explanation"]["text"]
        if len(lines) == 1:
            grouped[backend, f"{signature}: {text}"] = records
        else:
            # a joined line a model reproduced names it as a model's items, not as a diagnosed line
            joined = "; ".join(s.replace(DIAGNOSED, "items a defect model reproduces, ") for s, _ in lines)
            grouped[backend, f"{records[0]['outcome']}: {EXPLAINED}{text}; {len(lines)} lines joined: {joined}"] = [
                r for _, rs in lines for r in rs]


def undiagnosed_line(items: list[Record]) -> str | None:
    """Where the run's diagnosis budget cut diagnosis short: how many failures it left unnamed."""
    left = sum(1 for r in items if r.get("undiagnosed"))
    return (f"Diagnosis was cut short: {left} failing item{'s' if left != 1 else ''} left undiagnosed, the run's "
            f"diagnosis budget spent (--conformance-diagnosis-budget).") if left else None
