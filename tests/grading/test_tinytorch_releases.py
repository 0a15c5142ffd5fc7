"""TinyTorch's releases as a test matrix: each release's own module-11 solution, in its own layout, graded by one
``embconf grade`` run, earns full marks for what it implements, and each of its known gaps is named once, truly.

The submissions are this suite's own code, modelled on each release's API and layout
(tests/tinytorch_releases/README.md says which release each one models and what it lacks):

- ``autumn2025``: October 2025, module 11 exported to ``tinytorch/text/embeddings.py``; autograd of ``Function``
  nodes with ``saved_tensors`` and ``apply``, recorded as ``_grad_fn``; positions, the scale and the 1-D squeeze
  computed on ``.data`` (no gradient passes them); no ``start_pos``; ``create_sinusoidal_embeddings`` not exported.
- ``late2025``: December 2025, still ``text/embeddings.py`` (the source beside it, ``src/11_embeddings``, already
  exports to ``core.embeddings``): ``EmbeddingBackward(weight, indices)``, every step tracked; ids checked for
  range only (``astype(int)``); no ``start_pos``; ``create_sinusoidal_embeddings`` not exported.
- ``nov2025-course``: the late-2025 module handed in as the course repository of November 2025: the jupytext
  pair ``modules/11_embeddings/embeddings.{ipynb,py}`` (``default_exp text.embeddings``) beside the student's
  package of earlier modules.
- ``today`` and ``today-course``: today's release (``tinytorch/core/embeddings.py``, ``EmbeddingFunction``; the
  suite's example student is written to its API), as a package and as the course repository's notebook.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402
from helpers import outcomes, run_cli  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.reports.json_report import parse  # noqa: E402

RELEASES = Path(__file__).resolve().parents[1] / "tinytorch_releases"
TEXT_MODULE = Path("tinytorch", "text", "embeddings.py")
MISSING_SINUSOID = "create_sinusoidal_embeddings"
ITEMS = ("lookup", "backward", "validation", "sinusoid", "positions", "layer", "parameters")
# release -> the rubric items its own solution implements (full marks); every other item loses to a known gap
IMPLEMENTS = {
    "today": ITEMS,
    "today-course": ITEMS,
    "late2025": ("lookup", "positions"),
    "nov2025-course": ("lookup", "positions"),
    "autumn2025": ("lookup",),
}
TEXT_ERA_GAPS = {  # gap -> which failing cases it breaks (the case's record, its golden)
    f"{MISSING_SINUSOID} is never exported, and EmbeddingLayer calls it": lambda case, golden: (
        MISSING_SINUSOID in case["message"]
    ),
    "ids are checked for range only, then cast with astype(int)": lambda case, golden: (
        golden.expected_error == "invalid_index" and "float_ids" in golden.features
    ),
    "the lookup's backward reshapes grad_output to (-1, D) unchecked": lambda case, golden: (
        golden.operation == "embedding_backward" and golden.expected_error == "shape_mismatch"
    ),
}
GRADIENT_NONE = re.compile(r"'grad_\w+' (?:is|=) None")


def _graph_cut(case, golden) -> bool:
    """A gradient came back None: no value reached it (on a case expecting an error too: no backward ran, so the
    case is the cut graph's whatever else would refuse it, as a lookup without backward is in test_tinytorch_words)."""
    return bool(GRADIENT_NONE.search(case["message"]))


AUTUMN_GAPS = {  # positions, the sqrt(D) scale and the 1-D squeeze are computed on .data: no gradient passes them
    **{
        gap: (lambda case, golden, breaks=breaks: breaks(case, golden) and not _graph_cut(case, golden))
        for gap, breaks in TEXT_ERA_GAPS.items()
    },
    "positions, the scale and the squeeze cut the graph": _graph_cut,
}
KNOWN_GAPS = {
    "today": {},
    "today-course": {},
    "late2025": TEXT_ERA_GAPS,
    "nov2025-course": TEXT_ERA_GAPS,
    "autumn2025": AUTUMN_GAPS,
}
FAILING = ("fail", "error", "crash", "timeout")


def _course(folder: Path, package: Path, module: Path, default_exp: str) -> None:
    """A course repository: the student's package without module 11, and the jupytext pair exporting it."""
    shutil.copytree(package, folder / "tinytorch", ignore=shutil.ignore_patterns("__pycache__"))
    source = (folder / module).read_text(encoding="utf-8")
    (folder / module).unlink()
    notebooks = folder / "modules" / "11_embeddings"
    notebooks.mkdir(parents=True)
    for form in ("ipynb", "percent"):
        samples.write(notebooks, "embeddings", form, source=source, default_exp=default_exp)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every release in its own layout, graded by one run: (gradebook rows, records by name, submissions folder)."""
    folder = tmp_path_factory.mktemp("releases")
    for release in ("autumn2025", "late2025"):
        shutil.copytree(RELEASES / release, folder / release, ignore=shutil.ignore_patterns("__pycache__"))
    src = folder / "late2025" / "src" / "11_embeddings"
    src.mkdir(parents=True)
    samples.write(src, "11_embeddings", "percent", source=(RELEASES / "late2025" / TEXT_MODULE).read_text("utf-8"))
    _course(folder / "nov2025-course", RELEASES / "late2025" / "tinytorch", TEXT_MODULE, "text.embeddings")
    shutil.copytree(samples.EXAMPLE / "tinytorch", folder / "today" / "tinytorch")
    _course(
        folder / "today-course",
        samples.EXAMPLE / "tinytorch",
        samples.MODULE.relative_to(samples.EXAMPLE),
        "core.embeddings",
    )
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "120"]) == 0
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle)}
    records = {name: json.loads((out / "records" / f"{name}.json").read_text("utf-8")) for name in rows}
    return rows, records, folder


@pytest.mark.parametrize("release", sorted(IMPLEMENTS))
def test_each_release_earns_full_marks_for_what_it_implements(graded, release):
    rows = graded[0]
    row = rows[release]
    assert row["reason"] == "", row["reason"]
    assert row["kind"] in ("package", "ipynb")
    full = {item: row[item] for item in IMPLEMENTS[release]}
    rubric = {item: float(row[item]) for item in ITEMS}
    assert all(float(points) > 0 for points in full.values()), full
    gaps = [item for item in ITEMS if item not in IMPLEMENTS[release]]
    assert all(rubric[item] < _max_points(graded, item) for item in gaps), (rubric, gaps)
    assert {item: rubric[item] for item in IMPLEMENTS[release]} == {
        item: _max_points(graded, item) for item in IMPLEMENTS[release]
    }


def _max_points(graded, item: str) -> float:
    return float(graded[0]["today"][item])


def _gaps(record, release, cases_by_id):
    """gap -> the ids of the release's failing cases it breaks."""
    failing = [case for case in record["cases"] if case["outcome"] in FAILING or not case["provided"]]
    return {
        gap: {c["id"] for c in failing if breaks(c, cases_by_id[c["id"]])}
        for gap, breaks in KNOWN_GAPS[release].items()
    }, failing


@pytest.mark.parametrize("release", sorted(IMPLEMENTS))
def test_every_failure_of_a_release_is_one_of_its_known_gaps(graded, release, cases_by_id):
    """Nothing fails but what the release lacks (no false failure from its layout or API), and each gap is real."""
    record = graded[1][release]
    gaps, failing = _gaps(record, release, cases_by_id)
    assert all(gaps.values()), gaps
    explained = set().union(*gaps.values()) if gaps else set()
    missing_op = {c["id"] for c in failing if not c["provided"] and c["operation"] == "sinusoidal_table"}
    assert {c["id"] for c in failing} - explained - missing_op == set()
    assert bool(missing_op) == (release not in ("today", "today-course"))  # the sinusoid table: never exported


@pytest.mark.parametrize("release", ["autumn2025", "late2025", "nov2025-course"])
def test_the_missing_name_is_named_in_one_verdict_entry(graded, release):
    mistakes = graded[1][release]["verdict"]["mistakes"]
    assert [m["title"] for m in mistakes if MISSING_SINUSOID in m["title"]] == [
        m["title"] for m in mistakes if "NameError" in m["title"]
    ]
    assert len([m for m in mistakes if MISSING_SINUSOID in m["title"]]) == 1


@pytest.mark.parametrize("release", ["autumn2025", "late2025", "nov2025-course"])
def test_each_known_gap_is_one_entry_holding_every_case_it_breaks(graded, release, cases_by_id):
    """Named once, truly: one entry a gap, with all its cases; the constructor failure names the class and the name."""
    record = graded[1][release]
    gaps, _ = _gaps(record, release, cases_by_id)
    entries = [set(m["cases"]) for m in record["verdict"]["mistakes"]]
    assert sorted(map(sorted, entries)) == sorted(map(sorted, gaps.values()))
    naming = next(m["title"] for m in record["verdict"]["mistakes"] if MISSING_SINUSOID in m["title"])
    assert "EmbeddingLayer" in naming


def test_which_file_was_graded_and_why_follows_the_layout_rule(graded):
    rows = graded[0]
    assert rows["autumn2025"]["graded"].startswith(
        "graded tinytorch/text/embeddings.py (the student's tinytorch package"
    )
    assert rows["late2025"]["graded"].startswith("graded tinytorch/text/embeddings.py (the student's tinytorch package")
    assert "until late 2025" in rows["late2025"]["graded"]
    assert rows["today"]["graded"].startswith("graded tinytorch/core/embeddings.py (the student's tinytorch package")
    for course, export in (("nov2025-course", "text.embeddings"), ("today-course", "core.embeddings")):
        assert rows[course]["graded"] == (
            f"graded modules/11_embeddings/embeddings.ipynb (the notebook exporting {export} in the course "
            "repository's module folder, run in the student's own tinytorch package; embeddings.py beside it is not graded)"
        )


@pytest.mark.parametrize("release", ["autumn2025", "late2025", "today"])
def test_tinytorch_on_the_release_folder_agrees_with_the_grade(graded, release):
    """``--impl tinytorch:FOLDER`` (a fresh interpreter) finds the same module and gives every graded case the same
    outcome and the run the same verdict."""
    record = graded[1][release]
    done = run_cli("run", "--impl", f"tinytorch:{graded[2] / release}", "--report-json", "-")
    assert done.returncode == (0 if release == "today" else 1), done.stderr
    report = parse(done.stdout.encode())  # JSON lines, as the run wrote them
    assert report["implementation"]["name"].endswith(record["graded"].split()[1])
    ran = outcomes(report)
    assert {c["id"]: ran[c["id"]] for c in record["cases"]} == {c["id"]: c["outcome"] for c in record["cases"]}
    assert [m["title"] for m in report["verdict"]["mistakes"]] == [
        m["title"] for m in record["verdict"]["mistakes"] if m["id"]
    ]
