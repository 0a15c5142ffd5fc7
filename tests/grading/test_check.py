"""``embconf.check`` anywhere: an unguarded script, ``python -i``, a ``str`` path, the student's own package,
half-done work and a module that does not load, each said briefly."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

import embconf  # noqa: E402


def python(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, input=stdin, capture_output=True, text=True, timeout=600
    )


def test_an_unguarded_script_checks_a_str_path_and_prints_briefly(tmp_path):
    samples.write(tmp_path, "mine", "module", "overwrite")
    (tmp_path / "check_me.py").write_text('import embconf\nprint(embconf.check("mine.py"))\n', encoding="utf-8")
    done = python(tmp_path, "check_me.py")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.startswith("embconf check mine.py: ") and len(done.stdout) < 5000
    assert done.stdout.count("indexed assignment (grad[ids] = g") == 1  # one mistake, said once


def test_python_i_shows_a_one_line_repr(tmp_path):
    samples.write(tmp_path, "mine", "module")
    done = python(tmp_path, "-i", stdin='import embconf\nr = embconf.check("mine.py")\nr\n')
    assert "<embconf.check 100/100: all " in done.stderr + done.stdout, done.stderr[-2000:]
    assert len(done.stdout) < 300 and "Traceback" not in done.stderr


def test_a_module_in_the_students_own_package_runs_on_that_package(tmp_path):
    package = samples.write(tmp_path, "home", "package")
    core = package / "tinytorch" / "core"
    with open(core / "tensor.py", "a", encoding="utf-8") as handle:
        handle.write("\nONLY_IN_THIS_STUDENTS_TENSOR = True\n")
    module = core / "embeddings.py"
    module.write_text(
        samples.module_text() + "\nfrom tinytorch.core.tensor import ONLY_IN_THIS_STUDENTS_TENSOR\n", encoding="utf-8"
    )
    result = embconf.check(str(module))
    assert result.passed and result.score.total == 100, result.verdict
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(module, alone / "embeddings.py")  # the same module outside the package: on the example base
    assert "ONLY_IN_THIS_STUDENTS_TENSOR" in embconf.check(alone / "embeddings.py").problem


def test_half_done_work_says_what_is_not_written_yet(tmp_path):
    text = samples.module_text()
    half = tmp_path / "half.py"
    half.write_text(text[: text.index("class EmbeddingLayer")], encoding="utf-8")
    result = embconf.check(half)
    assert "Not written yet: embedding_layer_forward (no EmbeddingLayer)" in str(result)
    assert result.unwritten() == [
        "embedding_layer_forward (no EmbeddingLayer)",
        "embedding_layer_backward (no EmbeddingLayer)",
        "embedding_layer_own_backward (no EmbeddingLayer)",
        "parameter_count (no EmbeddingLayer)",
    ]
    assert not result.failures() and result.score.total == 75


def test_what_cannot_be_checked_is_one_line(tmp_path):
    for target, says in ((tmp_path / "missing.py", "no such file or folder"), (42, "cannot check a int")):
        result = embconf.check(target)
        assert says in result.problem and "\n" not in result.problem and result.score.total == 0
        assert len(str(result).splitlines()) == 2


def test_a_lone_module_is_checked_on_the_tinytorch_the_student_imports(tmp_path):
    home = tmp_path / "course"
    samples.write(tmp_path, "course", "package")
    with open(home / "tinytorch" / "core" / "tensor.py", "a", encoding="utf-8") as handle:
        handle.write("\nONLY_IN_THIS_STUDENTS_TENSOR = True\n")
    (home / "mine.py").write_text(
        samples.module_text() + "\nfrom tinytorch.core.tensor import ONLY_IN_THIS_STUDENTS_TENSOR\n", encoding="utf-8"
    )
    (home / "check_me.py").write_text('import embconf\nprint(repr(embconf.check("mine.py")))\n', encoding="utf-8")
    done = python(home, "check_me.py")  # the script's folder is on sys.path: its tinytorch is importable
    assert done.stdout.startswith("<embconf.check 100/100"), done.stdout + done.stderr[-2000:]


def test_every_path_argument_takes_a_str(tmp_path):
    samples.write(tmp_path, "mine", "module", "overwrite")
    course = samples.write(tmp_path, "course", "package")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        "rubric_format: 1\nitems:\n  - id: backward\n    points: 10\n    requirements: ['EMB-BWD-*']\n",
        encoding="utf-8",
    )
    result = embconf.check(str(tmp_path / "mine.py"), base=str(course), rubric=str(rubric))
    assert not result.problem and result.score.max == 10 and 0 < result.score.total < 10, result.verdict
