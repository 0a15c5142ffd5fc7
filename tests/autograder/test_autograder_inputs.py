"""What ``embconf autograder`` writes and refuses: no solution in the zip, a wheel of the running suite by default
(or one line saying why not), names and values quoted or refused before they reach a script, a symlinked
``--out`` written through, a run timeout ``embconf gradescope`` could not use refused."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT, assert_exit, run_cli

from embconf.autograder.stub import STUB
from embconf.autograder.wheel import EXAMPLE_MODULE, _digest
from embconf.cli import main

sys.path.insert(0, str(ROOT / "tests" / "grading"))
import grading_samples as samples  # noqa: E402

REQUIREMENT = "embedding-conformance==0.1.0"  # an explicit requirement: no wheel is built


def _zip(tmp_path: Path, *args: str) -> zipfile.ZipFile:
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), *args)
    assert_exit(done, 0)
    return zipfile.ZipFile(out)


def test_the_base_ships_a_stub_in_the_graded_modules_place(tmp_path):
    course = samples.write(tmp_path, "course", "package")  # the course's package, its solution included
    with _zip(tmp_path, "--base", str(course), "--suite", REQUIREMENT) as archive:
        shipped = archive.read("base/tinytorch/core/embeddings.py").decode()
        tensor = archive.read("base/tinytorch/core/tensor.py").decode()
    assert shipped == STUB and "np.add.at" not in shipped
    assert tensor == (course / "tinytorch" / "core" / "tensor.py").read_text(encoding="utf-8")


def test_without_a_base_none_is_shipped_and_gradescope_checks_the_default(tmp_path):
    with _zip(tmp_path, "--suite", REQUIREMENT) as archive:
        names = archive.namelist()
        run = archive.read("run_autograder").decode()
        setup = archive.read("setup.sh").decode()
    assert not any(name.startswith("base/") for name in names)
    assert "--base" not in run and '--withhold "$AUTOGRADER/source"' in run
    assert "strip_installed_example()" in setup  # the installed example's solution is replaced too


@pytest.fixture(scope="module")
def default_zip(tmp_path_factory) -> Path:
    """The zip written with no --suite: a wheel of the running suite in it (built once for the module)."""
    out = tmp_path_factory.mktemp("default") / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), timeout=900)
    if done.returncode == 2 and "cannot make a wheel of the running suite" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert_exit(done, 0)
    return out


def test_by_default_the_running_suite_travels_as_a_wheel_without_the_solution(default_zip):
    with zipfile.ZipFile(default_zip) as archive:
        wheels = [name for name in archive.namelist() if name.endswith(".whl")]
        setup = archive.read("setup.sh").decode()
        assert len(wheels) == 1, archive.namelist()
        wheel = zipfile.ZipFile(io.BytesIO(archive.read(wheels[0])))
    assert f'"$AUTOGRADER/source/"{wheels[0]}' in setup and "embedding-conformance==" not in setup
    assert wheel.read(EXAMPLE_MODULE).decode() == STUB and "embconf/cli.py" in wheel.namelist()
    record = next(name for name in wheel.namelist() if name.endswith(".dist-info/RECORD"))
    listed = {line.split(",")[0]: line.split(",")[1] for line in wheel.read(record).decode().splitlines()}
    assert listed[EXAMPLE_MODULE] == f"sha256={_digest(STUB.encode())}"  # pip checks RECORD when it installs


def test_no_wheel_of_the_running_suite_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("embconf.autograder.wheel.sys.executable", str(tmp_path / "no-python"))
    monkeypatch.setattr("embconf.autograder.wheel.running_checkout", lambda: None)  # not a checkout either
    monkeypatch.setattr("embconf.autograder.wheel.DISTRIBUTION", "no-such-distribution-here")
    assert main(["autograder", "--out", str(tmp_path / "a.zip")]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot make a wheel of the running suite" in err and "--suite WHEEL" in err and "\n" not in err
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--suite", "emb$(touch PWNED).whl"], "not a valid wheel file name"),
        (["--suite", "embedding_conformance-0.1.0-py3-none-any (1).whl"], "not a valid wheel file name"),
        (["--suite=--index-url=http://x"], "not a pip option"),
        (["--run-timeout", "nan"], "--run-timeout must be more than 0"),
        (["--run-timeout", "inf"], "--run-timeout must be more than 0"),
        (["--run-timeout", "1e9"], "--run-timeout must be more than 0"),
    ],
)
def test_a_name_or_value_no_script_could_use_is_refused(tmp_path, args, says):
    done = run_cli("autograder", "--out", str(tmp_path / "a.zip"), *args, cwd=tmp_path)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no zip, and nothing ran: no PWNED


def test_what_the_scripts_are_given_reaches_them_quoted(tmp_path):
    hostile = "x$(touch PWNED)`touch PWNED2`"
    with _zip(tmp_path, "--suite", hostile, "--module-name", "$(touch PWNED3).py") as archive:
        archive.extractall(tmp_path / "source")
    fake = tmp_path / "python"  # a python that writes down the arguments it is given
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" >> "$(dirname "$0")/args.txt"\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "AUTOGRADER": str(tmp_path), "EMBCONF_PYTHON": str(fake)}
    for script in ("setup.sh", "run_autograder"):
        subprocess.run(["bash", str(tmp_path / "source" / script)], cwd=tmp_path, env=env, capture_output=True)
    given = (tmp_path / "args.txt").read_text(encoding="utf-8").splitlines()
    assert hostile in given and "$(touch PWNED3).py" in given
    assert not any(tmp_path.glob("PWNED*"))


def test_a_symlinked_out_is_written_through(tmp_path):
    target = tmp_path / "kept" / "autograder.zip"
    target.parent.mkdir()
    link = tmp_path / "link.zip"
    link.symlink_to(target)
    done = run_cli("autograder", "--out", str(link), "--suite", REQUIREMENT)
    assert_exit(done, 0)
    assert link.is_symlink() and zipfile.is_zipfile(target)


def test_the_courses_own_requirements_travel_and_setup_installs_them(tmp_path):
    """Issue 37: a course whose TinyTorch needs SciPy lists it; the zip ships the file and setup.sh installs it."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# the course's autograd\nscipy>=1.10\n", encoding="utf-8")
    with _zip(tmp_path, "--suite", REQUIREMENT, "--requirements", str(requirements)) as archive:
        assert archive.read("requirements.txt").decode() == requirements.read_text(encoding="utf-8")
        setup = archive.read("setup.sh").decode()
    assert '-m pip install -r "$AUTOGRADER/source/requirements.txt"' in setup
    with _zip(tmp_path, "--suite", REQUIREMENT) as archive:  # none given: none shipped, none installed
        assert "requirements.txt" not in archive.namelist() and "-r " not in archive.read("setup.sh").decode()


@pytest.mark.parametrize("text", ["--extra-index-url http://example.invalid\nscipy\n", "-r other.txt\n"])
def test_a_requirements_file_with_a_pip_option_is_one_line(tmp_path, text):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(text, encoding="utf-8")
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), "--suite", REQUIREMENT, "--requirements", str(requirements))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pip option" in done.stderr and not out.exists()
    missing = run_cli("autograder", "--out", str(out), "--suite", REQUIREMENT, "--requirements", str(tmp_path / "no"))
    assert missing.returncode == 2 and "--requirements" in missing.stderr and not out.exists()
