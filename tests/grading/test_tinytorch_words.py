"""Feedback in a TinyTorch student's language, from one ``embconf grade`` run over TinyTorch submissions: every
hint says ValueError where the spec names an error kind; a check written as ``assert`` is one entry saying so; code
with no backward at all (every gradient None) is one entry, also on the case that expects an error; a constructor
that fails is one entry naming the class and the missing name, on valid and invalid inputs alike; the same
``astype(int)`` line is the same cause in every submission that has it."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402
from helpers import run_report  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.model.vocabulary import error_kinds  # noqa: E402

RELEASES = Path(__file__).resolve().parents[1] / "tinytorch_releases"
TEXT_MODULE = Path("tinytorch", "text", "embeddings.py")
CORE_MODULE = Path("tinytorch", "core", "embeddings.py")
TRACKED_LOOKUP = """        result = Tensor(self.weight.data[indices.data.astype(int)], requires_grad=self.weight.requires_grad)
        if result.requires_grad:
            result._grad_fn = EmbeddingBackward(self.weight, indices)
        return result"""
FAILING = ("fail", "error", "crash", "timeout")
SPEC_KINDS = re.compile(r"\b(" + "|".join(error_kinds()) + r")\b|EMB-ERR-1")


def _copy(source: Path, folder: Path) -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path} changed: {old[:60]!r} is gone"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _with_asserts(folder: Path) -> None:
    """Today's solution with every ``if bad: raise ValueError(...)`` check written as ``assert not bad, (...)``."""
    module = folder / CORE_MODULE
    text = module.read_text(encoding="utf-8")
    checked = re.sub(r"if (.+):\n\s+raise ValueError\(", r"assert not (\1), (", text)
    assert "raise ValueError" not in checked and checked.count("assert not (") >= 8
    module.write_text(checked, encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(records by name, the out folder) of one grade run."""
    folder = tmp_path_factory.mktemp("subs")
    for release in ("autumn2025", "late2025"):
        _copy(RELEASES / release, folder / release)
    _edit(  # the late-2025 lookup without its backward: a plain Tensor of the rows (every gradient None)
        _copy(RELEASES / "late2025", folder / "no-backward") / TEXT_MODULE,
        TRACKED_LOOKUP,
        "        return Tensor(self.weight.data[indices.data.astype(int)])",
    )
    _with_asserts(_copy(samples.EXAMPLE, folder / "asserts"))
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "120"]) == 0
    names = ("autumn2025", "late2025", "no-backward", "asserts")
    return {name: json.loads((out / "records" / f"{name}.json").read_text("utf-8")) for name in names}, out


def _failing(record) -> set[str]:
    return {c["id"] for c in record["cases"] if c["outcome"] in FAILING}


def _entry(record, case_id: str) -> dict:
    return next(m for m in record["verdict"]["mistakes"] if case_id in m["cases"])


def test_a_check_written_as_assert_is_one_entry_that_says_so_in_tinytorch_words(graded):
    record = graded[0]["asserts"]
    assert record["status"] == "graded" and len(_failing(record)) > 20
    (entry,) = record["verdict"]["mistakes"]
    assert set(entry["cases"]) == _failing(record)
    assert "`assert`" in entry["title"] and "ValueError" in entry["title"] and "python -O" in entry["title"]
    assert "raise ValueError" in entry["hint"] and not SPEC_KINDS.search(entry["title"] + entry["hint"])


def test_no_backward_at_all_is_one_entry_also_on_the_case_that_expects_an_error(graded):
    record = graded[0]["no-backward"]
    backward = {c["id"] for c in record["cases"] if c["operation"] == "embedding_backward"} & _failing(record)
    entry = _entry(record, "lookup.error.backward_grad_shape")
    assert backward <= set(entry["cases"]) and len(backward) > 10
    assert "no gradient" in entry["title"]
    assert not any("returns a result where" in m["title"] for m in record["verdict"]["mistakes"])


@pytest.mark.parametrize("name", ["autumn2025", "late2025", "no-backward"])
def test_a_constructor_failure_is_one_entry_naming_the_class_and_the_missing_name(graded, name):
    record = graded[0][name]
    named = [m for m in record["verdict"]["mistakes"] if "create_sinusoidal_embeddings" in m["title"]]
    assert len(named) == 1
    (entry,) = named
    assert "the EmbeddingLayer constructor raised NameError" in entry["title"]
    assert "layer.error.sinusoidal_too_long_1d" in entry["cases"]  # an invalid input: the same one entry
    assert {c["id"] for c in record["cases"] if "create_sinusoidal_embeddings" in c["message"]} == set(entry["cases"])
    assert "#| export" in entry["hint"]


def test_the_same_astype_line_is_the_same_cause_in_every_submission(graded):
    floats = {}
    for name in ("autumn2025", "late2025"):
        record = graded[0][name]
        cases = {c for c in _failing(record) if c.startswith("lookup.error.float_")}
        entry = _entry(record, "lookup.error.float_nan")
        assert cases <= set(entry["cases"]) and len(cases) == 4
        floats[name] = entry["id"]
    assert len(set(floats.values())) == 1, floats


def test_an_operation_the_module_lacks_is_named_by_the_names_it_would_export(graded):
    feedback = (graded[1] / "feedback" / "late2025.md").read_text("utf-8")
    assert (
        "sinusoidal_table is missing from the submission: the module has no _compute_sinusoidal_table or "
        "create_sinusoidal_embeddings"
    ) in feedback


def test_no_hint_grade_or_gradescope_prints_names_a_spec_error_kind(graded):
    records, out = graded
    for name, record in records.items():
        hints = [m["hint"] for m in record["verdict"]["mistakes"]]
        feedback = (out / "feedback" / f"{name}.md").read_text("utf-8")
        hints += [line for line in feedback.splitlines() if line.strip().startswith("Hint:")]
        results = json.loads((out / "results" / f"{name}.json").read_text("utf-8"))
        hints += [line for test in results["tests"] for line in test["output"].splitlines() if "Hint:" in line]
        assert hints and not [hint for hint in hints if SPEC_KINDS.search(hint)], name


ASSERTED_LOOKUP = """import numpy as np


def embedding_forward(weight, ids):
    ids = np.asarray(ids)
    assert ids.dtype.kind in "iu" and ids.size and 0 <= ids.min() and ids.max() < weight.shape[0], "bad ids"
    return weight[ids]
"""


def test_another_implementation_keeps_the_spec_words(tmp_path):
    """The same assert checks in a ``functions:`` implementation: the spec's error kinds, not TinyTorch's words."""
    module = tmp_path / "asserted.py"
    module.write_text(ASSERTED_LOOKUP, encoding="utf-8")
    done, report = run_report(tmp_path, f"functions:{module}", select=["lookup.error.*"])
    assert report is not None, done.stderr
    mistakes = report["verdict"]["mistakes"]
    assert mistakes and not any("TinyTorch" in m["title"] for m in mistakes)
    assert any(SPEC_KINDS.search(m.get("hint", "")) for m in mistakes)
