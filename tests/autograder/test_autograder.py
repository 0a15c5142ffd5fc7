"""``embconf autograder``: the zip it writes, refused inputs, and (slow) the zip run as Gradescope runs it: a
wheel of the suite built from this tree, ``setup.sh`` installing it into a fresh virtual environment,
``run_autograder`` grading a submission in a simulated ``/autograder`` tree, outside any checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT, assert_exit, run_cli

sys.path.insert(0, str(ROOT / "tests" / "grading"))
import grading_samples as samples  # noqa: E402


def test_the_zip_holds_the_scripts_the_base_the_rubric_and_the_pinned_suite(tmp_path):
    out = tmp_path / "autograder.zip"
    recipe = ["--run-timeout", "120", "--base", str(samples.EXAMPLE), "--suite", "embedding-conformance==0.1.0"]
    done = run_cli("autograder", "--out", str(out), *recipe)
    assert_exit(done, 0)
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        run = archive.read("run_autograder").decode()
        setup = archive.read("setup.sh").decode()
        mode = archive.getinfo("run_autograder").external_attr >> 16
    assert names[:3] == ["setup.sh", "run_autograder", "rubric.yaml"] and mode & 0o111
    assert "base/tinytorch/core/tensor.py" in names and not any("__pycache__" in n for n in names)
    assert '--base "$AUTOGRADER/source/base"' in run and "--run-timeout 120.0" in run
    assert "pip install embedding-conformance==" in setup
    again = tmp_path / "again.zip"
    assert run_cli("autograder", "--out", str(again), *recipe).returncode == 0
    assert again.read_bytes() == out.read_bytes()  # the same inputs, the same zip


@pytest.mark.parametrize(
    "args, says",
    [
        (["--base", "."], "no tinytorch/core package in it"),
        (["--suite", "README-1.0-py3-none-any.whl"], "not a readable wheel"),
        (["--rubric", "nowhere.yaml"], "cannot read it"),
        (["--module-name", "a/b.py"], "expected a file name ending in .py"),
    ],
)
def test_a_bad_recipe_is_one_line_and_writes_nothing(tmp_path, args, says):
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), *args)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _prints(python: Path, code: str, cwd: Path) -> str:
    """What ``python -c code`` prints."""
    return subprocess.run([str(python), "-c", code], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def fresh_venv(folder: Path) -> Path:
    """A fresh virtual environment whose only borrowed packages are the suite's dependencies (numpy, PyYAML,
    jsonschema, read from this interpreter's site-packages by a path line, so pip installs offline) and pip
    itself (``python -m pip`` installs into the environment it runs in; ensurepip would take seconds)."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    purelib = _prints(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])", folder)
    import jsonschema
    import numpy
    import pip
    import yaml

    roots = sorted({str(Path(module.__file__).resolve().parents[1]) for module in (numpy, yaml, jsonschema, pip)})
    Path(purelib, "embconf_test_dependencies.pth").write_text("\n".join(roots) + "\n", encoding="utf-8")
    return python


def gradescope_tree(tmp_path: Path, *args: str) -> tuple[Path, dict[str, str], Path]:
    """(the /autograder tree, the environment its scripts run in, its python) after ``embconf autograder ARGS``
    (a wheel of this tree bundled) and ``setup.sh`` in a fresh virtual environment; skips where that cannot run."""
    tree = tmp_path / "autograder"
    zipped = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(zipped), *args, timeout=900)  # a wheel of this tree, built and bundled
    if done.returncode == 2 and "cannot make a wheel of the running suite" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert_exit(done, 0)
    for folder in ("source", "submission", "results"):
        (tree / folder).mkdir(parents=True)
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(tree / "source")
    for script in ("setup.sh", "run_autograder"):
        (tree / "source" / script).chmod(0o755)
    python = fresh_venv(tmp_path / "venv")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))},
        "AUTOGRADER": str(tree),
        "EMBCONF_PYTHON": str(python),
        "PIP_NO_INDEX": "1",  # offline: the wheel is in the zip, its dependencies are borrowed
        "PIP_NO_DEPS": "1",
    }
    setup = subprocess.run(
        ["bash", str(tree / "source" / "setup.sh")], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    if setup.returncode != 0 and "No matching distribution" in setup.stderr + setup.stdout:
        pytest.skip("pip cannot install offline here")
    assert setup.returncode == 0, (setup.stdout + setup.stderr)[-3000:]
    return tree, env, python


def run_autograder(tree: Path, env: dict[str, str], cwd: Path) -> dict:
    """``run_autograder`` on what ``tree/submission`` holds: the results.json it wrote."""
    graded = subprocess.run(
        [str(tree / "source" / "run_autograder")], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert graded.returncode == 0, graded.stderr[-3000:]
    return json.loads((tree / "results" / "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_autograder_grades_in_a_simulated_gradescope_tree(tmp_path):
    tree, env, python = gradescope_tree(tmp_path)
    located = _prints(python, "import embconf.grading.submissions as s; print(s.EXAMPLE_BASE)", tmp_path)
    assert str(tmp_path / "venv") in located and str(ROOT) not in located  # the wheel, not this checkout
    shipped = Path(located, "tinytorch", "core", "embeddings.py").read_text(encoding="utf-8")
    assert "np.add.at" not in shipped  # no solution installed where a submission could read it

    samples.write(tree / "submission", "embeddings", "module", "overwrite")
    results = run_autograder(tree, env, tmp_path)
    assert 0 < results["score"] < 100 and "indexed assignment" in json.dumps(results)
