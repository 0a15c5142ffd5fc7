"""Feedback as strong where students look first: the notebook view grouped by mistake with its hint, every
suggested command runnable as printed, a stub read as "not written yet" once (the function that raises, with the
hint) in every form, tracebacks shown down to the line that raised."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

import embconf  # noqa: E402
from embconf.cli import main  # noqa: E402

ACCUMULATE = "        np.add.at(grad_weight, self.ids, grad_output)  # repeated ids accumulate"
RAISING = "        raise RuntimeError('the line that raised')"
STUB = "        raise NotImplementedError('write the scatter-add')"


def _module(folder: Path, name: str, replacement: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(samples.module_text().replace(ACCUMULATE, replacement), encoding="utf-8")
    return path


def test_the_notebook_view_groups_failures_by_mistake_with_the_hint(tmp_path):
    samples.write(tmp_path, "mine", "module", "overwrite")
    result = embconf.check(tmp_path / "mine.py")
    shown = result._repr_html_()
    assert len(result.failures()) > 10 and shown.count("<details") == 1, shown  # one mistake, one group
    assert shown.count("indexed assignment (grad[ids] = g") == 1 and "Hint: use np.add.at" in shown


def test_a_lone_modules_command_runs_as_printed(tmp_path):
    samples.write(tmp_path, "mine", "module", "overwrite")
    result = embconf.check(str(tmp_path / "mine.py"))
    assert f"Every failure in full: {result.command}" in str(result) and "PYTHONPATH=" in result.command
    done = subprocess.run(result.command + " -q", shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "indexed assignment" in done.stdout, done.stderr[-2000:]  # fails, as check said


def test_a_namespace_names_no_command_it_cannot_run(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(samples.EXAMPLE))
    namespace: dict = {}
    exec(compile(samples.module_text("overwrite"), "notebook", "exec"), namespace)  # what a notebook cell defines
    shown = str(embconf.check(namespace))
    assert "embconf run --impl tinytorch:the notebook" not in shown and ".failures()" in shown


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("subs")
    _module(folder, "stub", STUB)
    _module(folder, "raising", RAISING)
    out = folder.parent / "out"
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1"]) == 0
    return out


UNWRITTEN = "not written yet: `backward` (embeddings.py line "


def test_a_stub_reads_not_written_yet_once_in_the_feedback_gradebook_and_report(graded):
    feedback = (graded / "feedback" / "stub.md").read_text(encoding="utf-8").replace("\\`", "`")
    assert feedback.count(UNWRITTEN) == 1 and "The same mistake as under" in feedback, feedback[:1500]
    assert "Hint: write it" in feedback and "raised NotImplementedError at" not in feedback
    gradebook = (graded / "gradebook.csv").read_text(encoding="utf-8")
    assert UNWRITTEN in gradebook and "raised NotImplementedError at" not in gradebook
    report = (graded / "report.html").read_text(encoding="utf-8")
    assert "raised NotImplementedError at" not in report and "write it: the module" in report.replace("&#x27;", "'")


def test_a_stub_checked_is_one_function_not_written_yet(tmp_path):
    stub = _module(tmp_path, "stub", STUB)
    result = embconf.check(stub)
    assert len(result.unwritten()) == 1 and result.unwritten()[0].startswith("backward (embeddings.py line ")
    shown = str(result)
    assert shown.count("not written yet") == 1 and "hint: write it" in shown and "Not written yet:" not in shown


def test_a_traceback_is_shown_down_to_the_line_that_raised(graded):
    feedback = (graded / "feedback" / "raising.md").read_text(encoding="utf-8")
    block = feedback.split("```")[1]
    assert (
        'File "tinytorch/core/embeddings.py", line' in block and "raise RuntimeError('the line that raised')" in block
    )
