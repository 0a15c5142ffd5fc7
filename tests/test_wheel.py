"""A wheel that works anywhere: built from this checkout, installed into a clean virtual environment, and every
command run from a temporary directory outside any checkout, so that nothing can come from the source tree.

Slow (a wheel build and a venv, then each command in a fresh interpreter). The clean environment sees the
dependencies of the test's own interpreter (numpy, PyYAML, jsonschema) through a ``.pth`` file, so that no
network is needed to install; the suite itself comes only from the wheel (checked first), built as ``embconf
autograder`` builds it (offline with this interpreter's setuptools, else in pip's isolated build). Skips, saying
why, when no wheel can be built or no venv can be made.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest
from helpers import ROOT

EXAMPLE = ROOT / "examples" / "tinytorch_student"
STUDENT_MODULE = EXAMPLE / "tinytorch" / "core" / "embeddings.py"


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the clean environment's bin directory, an empty working directory outside any checkout)."""
    pip_version = tuple(int(part) for part in version("pip").split(".")[:2] if part.isdigit())
    if pip_version < (22, 3):
        pytest.skip(
            f"installing into another environment needs pip >= 22.3 (pip --python); this is pip {version('pip')}"
        )
    from embconf.autograder.wheel import WheelError, running_suite

    base = tmp_path_factory.mktemp("wheel")
    try:  # as embconf autograder builds it: offline with this Python's setuptools, else in pip's isolated build
        wheels = [running_suite(base)]
    except WheelError as exc:
        pytest.skip(str(exc))
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    if made.returncode != 0:
        pytest.skip(f"no virtual environment can be made here: {made.stderr.strip()[-300:]}")
    python = venv / "bin" / "python"
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base).stdout.strip()
    )
    # the test interpreter's dependencies, never its (editable) embconf: a plain path list, whose own .pth
    # files (the editable install's finder among them) are not processed
    dependencies = [path for path in sys.path if path.endswith("site-packages")]
    (purelib / "zz_test_dependencies.pth").write_text("\n".join(dependencies) + "\n")
    install = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheels[0])], base
    )
    assert install.returncode == 0, install.stderr[-2000:]
    work = base / "work"
    work.mkdir()
    return venv / "bin", work


def _embconf(installed: tuple[Path, Path], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    bin_dir, work = installed
    return _run([str(bin_dir / "embconf"), *args], cwd=work, timeout=timeout)


def test_the_suite_comes_from_the_wheel_not_the_checkout(installed):
    bin_dir, work = installed
    done = _run([str(bin_dir / "python"), "-c", "import embconf, sys; print(embconf.__file__)"], cwd=work)
    location = Path(done.stdout.strip())
    assert done.returncode == 0 and ROOT not in location.parents, done.stdout + done.stderr
    assert sysconfig.get_path("purelib") not in str(location)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--impl", "reference", "-q"],
        ["list"],
        ["list", "requirements"],
        ["show", "lookup.backward.module_example_020"],
        ["explain", "EMB-BWD-1"],
        ["validate"],
        ["regenerate", "--check"],
    ],
    ids=" ".join,
)
def test_a_command_exits_0_outside_any_checkout(installed, args):
    done = _embconf(installed, *args)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert done.stdout.strip()


def test_run_checks_the_example_student_copied_anywhere(installed):
    student = installed[1] / "student"
    shutil.copytree(EXAMPLE, student)
    done = _embconf(installed, "run", "--impl", f"tinytorch:{student / 'tinytorch' / 'core' / 'embeddings.py'}", "-q")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]


def test_matrix_writes_its_three_documents(installed):
    work = installed[1]
    done = _embconf(
        installed, "matrix", "--impl", "reference", "--json", "m.json", "--markdown", "m.md", "--html", "m.html"
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert json.loads((work / "m.json").read_text())["implementations"][0]["name"]
    assert (work / "m.md").read_text().strip() and (work / "m.html").read_text().strip()


def test_bench_measures_the_reference(installed):
    work = installed[1]
    done = _embconf(installed, "bench", "--impl", "reference", "--sizes", "tiny", "--repeats", "3", "--json", "b.json")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert json.loads((work / "b.json").read_text())


def test_gradescope_grades_a_package_submission(installed):
    work = installed[1]
    submission = work / "gradescope" / "submission"
    shutil.copytree(EXAMPLE, submission)
    results = work / "gradescope" / "results.json"
    done = _embconf(installed, "gradescope", "--submission", str(submission), "--results", str(results))
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert json.loads(results.read_text())["score"] > 0


def test_grade_a_single_module_with_the_default_base(installed):
    work = installed[1]
    submissions = work / "class"
    submissions.mkdir()
    shutil.copy(STUDENT_MODULE, submissions / "ada.py")
    done = _embconf(installed, "grade", str(submissions), "--out", str(work / "graded"), "--jobs", "1")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    rows = list(csv.DictReader((work / "graded" / "gradebook.csv").read_text().splitlines()))
    assert [(row["name"], row["kind"]) for row in rows] == [("ada", "module")], rows
    assert rows[0]["score"] == rows[0]["max"] and int(rows[0]["score"]) > 0, rows  # graded on the wheel's base


def test_autograder_bundles_the_installed_suite_without_the_solution(installed):
    import io
    import zipfile

    work = installed[1]
    done = _embconf(installed, "autograder", "--out", "autograder.zip")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    with zipfile.ZipFile(work / "autograder.zip") as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".whl")]
        wheel = zipfile.ZipFile(io.BytesIO(archive.read(name)))
    members = wheel.namelist()
    assert "embconf/cli.py" in members and any(m.endswith(".dist-info/entry_points.txt") for m in members)
    example = wheel.read("embconf/example_student_data/tinytorch/core/embeddings.py").decode()
    assert "np.add.at" not in example  # packed again from the installed files, the solution replaced by the stub
