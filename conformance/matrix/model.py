"""The matrix document: per requirement (grouped by spec section) one cell per implementation, and
per implementation its claim and its distinct deviations with their likely causes.

Everything is derived from each implementation's run record: a deviation is a cause of the record's verdict
(the causes ``embconf run`` names for the same run), or, for failures no cause explains, their common message.
Sections and subjects come from ``spec/vocabulary.json``."""

from __future__ import annotations

import json
import platform
import re
import shlex
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Sequence

from embconf.diagnosis.titles import merged_title
from embconf.diagnosis.verdict import case_title
from embconf.model.claim import claim
from embconf.model.impl import Impl
from embconf.model.outcomes import NOT_APPLICABLE, PASS, PROBLEMS, XFAIL, XPASS, CaseResult
from embconf.model.record import Cause, RunRecord, Verdict
from embconf.model.sinusoid import SinusoidProfile
from embconf.model.version import __version__
from embconf.model.vocabulary import requirement_order, requirement_subjects, section_of, sections, spec_version

MATRIX_FORMAT = 1


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def build(
    runs: Sequence[RunRecord], fixtures: dict[str, Any], command: str = "", generated: Optional[datetime] = None
) -> dict[str, Any]:
    """The matrix document of the run records (one column each, named by ``record.impl``)."""
    environment = this_environment()
    columns = [{**_implementation(r), "environment": _measured_in(r) or environment} for r in runs]
    return matrix_document(columns, _sections(runs, columns), fixtures, command, generated)


def matrix_document(
    columns: list[dict[str, Any]],
    sections: list[dict[str, Any]],
    fixtures: dict[str, Any],
    command: str = "",
    generated: Optional[datetime] = None,
    **more: Any,
) -> dict[str, Any]:
    """A matrix document of ``columns`` and ``sections``, measured (or merged) here and now."""
    generated = generated or datetime.now(timezone.utc)
    return {
        "matrix_format": MATRIX_FORMAT,
        "suite": {"name": "embedding-conformance", "version": __version__},
        "spec_version": spec_version(),
        "generated": generated.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "environment": this_environment(),
        "fixtures": fixtures,
        "implementations": columns,
        "sections": sections,
        **more,
    }


def this_environment() -> dict[str, str]:
    """Where this process measures: Python, NumPy and the platform (a column's framework version is its own)."""
    import numpy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "platform": platform.platform()}


def _measured_in(run: RunRecord) -> dict[str, str]:
    """Where a record read back from a report was measured ({} for a run of this process)."""
    found = run.origin["environment"] if run.origin else {}
    return {key: str(found[key]) for key in ("python", "numpy", "platform") if key in found}


def _implementation(run: RunRecord) -> dict[str, Any]:
    impl, results = str(run.impl), run.results
    caps = run.capabilities.to_json()
    summary = run.summary()
    found = claim(run)
    problems = [r for r in results if r.outcome in PROBLEMS or r.outcome in (XFAIL, XPASS)]
    return {
        "impl": impl,
        "slug": slug(impl),
        **{k: v for k, v in run.implementation.items() if isinstance(v, str)},
        "capabilities": {**caps, "notes": list(run.capabilities.notes)},
        "summary": summary,
        "applicable": found.applicable,
        "declined": found.declined,
        "documented": found.documented,
        "glue_decided": list(found.glue_decided),
        "claim": {
            "spec_version": spec_version(),
            "conforms": found.conforms,
            "error_kinds_verified": found.error_kinds_verified,
            "statement": found.statement,
        },
        "deviations": _deviations(problems, run.verdict),
        "failing": [
            {
                "id": r.id,
                "outcome": r.outcome.value,
                "requirements": list(r.requirements),
                "message": _first_line(r.message),
            }
            for r in problems
        ],
    }


def _first_line(message: str) -> str:
    return message.splitlines()[0] if message else ""


def _symptom(result: CaseResult) -> str:
    """What went wrong, without the case's own name and numbers: ``raised ValueError: ...``."""
    text = _first_line(result.message)
    text = text.split(f"{result.operation}: ", 1)[-1] if result.operation else text
    return re.sub(r"-?\d+(\.\d+)?", "N", text)[:160]


def _deviations(problems: list[CaseResult], verdict: Verdict) -> list[dict[str, Any]]:
    """Problems grouped by the verdict's cause that explains them (the causes ``embconf run`` names), else by
    the case's own first cause (beyond the verdict's few), else by their message; causes of one mistake (one
    identity) are one group. ``likely_cause`` is the cause's id: a mutant id, or ``symptom:KEY``. Problems the
    framework documents as its design (``documented``: a link and a sentence) are grouped apart and listed after
    the undocumented ones."""
    groups: dict[tuple[str, str], list[CaseResult]] = defaultdict(list)
    causes: dict[str, Cause] = {}
    for result in problems:
        cause = verdict.cause_of(result.id) or (result.causes[0] if result.causes else None)  # else its own diagnosis
        key = cause.identity if cause is not None else f"{result.outcome}: {_symptom(result)}"  # one per mistake
        if cause is not None:
            causes.setdefault(key, cause)
        groups[(key, result.documented.link if result.documented is not None else "")].append(result)
    deviations = []
    for (key, _), members in groups.items():
        cause = causes.get(key)
        requirements = sorted({req for r in members for req in r.requirements}, key=requirement_order)
        documented = members[0].documented
        deviations.append(
            {
                "summary": _said(cause, members) if cause is not None else key,
                "likely_cause": cause.id if cause is not None else None,
                "hint": cause.hint if cause is not None else "",
                "requirements": requirements,
                "cases": [r.id for r in members],
                "documented": documented.to_json() if documented is not None else None,
            }
        )
    return sorted(deviations, key=lambda d: (d["documented"] is not None, -len(d["cases"]), d["summary"]))


def _said(cause: Cause, members: list[CaseResult]) -> str:
    """A deviation's sentence, true of every case grouped under it: a mutant's summary, else what each of these
    cases measured of the mistake (never a case outside the group, nor the first case's numbers alone)."""
    if cause.is_mutant:
        return cause.summary
    return merged_title([case_title(r, cause) for r in members]) or cause.title


def cell_of(results: list[CaseResult]) -> dict[str, Any]:
    """A grid cell of the results of one requirement in one column (no results: n/a)."""
    counts = {o: n for o, n in _count(results).items() if n}
    failing = [r.id for r in results if r.outcome in PROBLEMS or r.outcome in (XFAIL, XPASS)]
    status = "fail" if failing else ("pass" if counts.get(PASS) else "n/a")
    return {
        "status": status,
        "counts": counts,
        "failing": failing,
        "glue": sum(bool(r.decided_by) and r.outcome == PASS for r in results),
    }


def _count(results: list[CaseResult]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for r in results:
        counts[r.outcome] += 1
    return counts


def _sections(runs: Sequence[RunRecord], columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spec's sections that have requirements, in order, each with a row per requirement the runs touched.
    A requirement the vocabulary does not know is an error: the corpus was validated against it."""
    titles, subjects = sections(), requirement_subjects()
    by_req: dict[str, dict[str, list[CaseResult]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for result in run.results:
            for req in result.requirements:
                by_req[req][str(run.impl)].append(result)
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for req in sorted(by_req, key=requirement_order):
        grouped[section_of(req)].append(
            {
                "id": req,
                "subject": subjects.get(req, ""),
                "cells": {c["impl"]: cell_of(by_req[req].get(c["impl"], [])) for c in columns},
            }
        )
    return [{"number": n, "title": titles[n], "requirements": reqs} for n, reqs in sorted(grouped.items())]


def write_json(path: Path, document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")


# ----- what both renderers print -------------------------------------------------------------------


def cell_text(cell: dict[str, Any]) -> str:
    """``pass 12``, ``fail 3/12``, ``n/a``; passes decided by glue are counted apart (``pass 5 (2 glue)``)."""
    counts = cell["counts"]
    ran = sum(n for o, n in counts.items() if o != NOT_APPLICABLE)
    if cell["status"] == "fail":
        return f"fail {len(cell['failing'])}/{ran}"
    if cell["status"] == "pass":
        return f"pass {counts.get(PASS, 0)}" + (f" ({cell['glue']} glue)" if cell["glue"] else "")
    return "n/a"


def anchor(column: dict[str, Any], requirement: str) -> str:
    return f"{column['slug']}-{slug(requirement)}"


def title(column: dict[str, Any]) -> str:
    return " ".join(part for part in (column.get("name", ""), column.get("version", "")) if part) or column["impl"]


def capabilities_text(column: dict[str, Any]) -> str:
    caps = column["capabilities"]
    count = len(caps["operations"])
    parts = [f"{count} operation{'s' if count != 1 else ''}", "dtypes " + "/".join(caps["dtypes"])]
    if caps["features"]:
        parts.append("features " + ", ".join(caps["features"]))
    parts.append(f"sinusoids {_sinusoid_text(caps)}")
    parts.extend(caps.get("notes", []))
    return "; ".join(parts)


def environment_text(column: dict[str, Any], doc: dict[str, Any]) -> str:
    """Where a column was measured, when that is not where the document says (a merged matrix), else ''."""
    env = column.get("environment")
    if not env or env == doc["environment"]:
        return ""
    return f"measured with Python {env['python']}, NumPy {env['numpy']} on {env['platform']}"


def _sinusoid_text(caps: dict[str, Any]) -> str:
    """The declared profile's name, or (spec 1.2.0) a point no profile names, told by its parameters."""
    if caps["sinusoid_convention"] != "family":
        return str(caps["sinusoid_convention"])
    try:
        return SinusoidProfile.from_json(caps.get("sinusoid_parameters")).describe()
    except ValueError:
        return "family"


def failing_by_requirement(column: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in column["failing"]:
        for req in case["requirements"]:
            grouped[req].append(case)
    return sorted(grouped.items(), key=lambda kv: requirement_order(kv[0]))


SHORT = 24  # a column name longer than this is shortened in the grid (the legend keeps the whole --impl)


def short_names(columns: Sequence[dict[str, Any]]) -> dict[str, str]:
    """A short column name per ``--impl``: a protocol peer by its program's name and arguments, a long path by its
    file name; the whole ``--impl`` wherever a short name would be ambiguous."""
    short = {c["impl"]: _short(c["impl"]) for c in columns}
    taken = Counter(short.values())
    return {impl: name if taken[name] == 1 else impl for impl, name in short.items()}


def _short(impl: str) -> str:
    if len(impl) <= SHORT:
        return impl
    kind, target = Impl.read(impl)  # a column's text, perhaps of a file measured elsewhere
    if kind == "subprocess":
        try:
            words = shlex.split(target)
        except ValueError:
            return impl
        if "-m" in words[:-1]:  # python -m package.module ARGS
            at = words.index("-m") + 1
            return " ".join([words[at].rsplit(".", 1)[-1], *words[at + 1 :]])
        files = [i for i, word in enumerate(words) if "/" in word or "." in Path(word).name]
        first = files[-1] if files else 0
        return " ".join([Path(words[first]).stem, *words[first + 1 :]]) if words else impl
    return f"{kind}:…/{Path(target).name}" if "/" in target else impl
