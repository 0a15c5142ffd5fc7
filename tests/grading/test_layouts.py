"""The layout rule (embconf.adapters.tinytorch_layouts): ``grade``, ``gradescope``, ``check`` and ``tinytorch:`` find module 11
in ``tinytorch/core/embeddings.py``, ``tinytorch/text/embeddings.py``, the notebook exporting it and the course
repository's module folders; a package ``__init__.py`` is never the graded module; the gradebook says which
file and why. The first tests reproduce the two false results of a ``text/`` package graded as its ``__init__``."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402
from helpers import run_cli  # noqa: E402

from embconf.adapters import tinytorch_layouts as layouts  # noqa: E402
from embconf.cli import main  # noqa: E402

UNCOMMITTED = "No module named 'tinytorch.core.activations'"


def text_package(folder: Path) -> Path:
    """The example student exported as TinyTorch did until late 2025: module 11 in tinytorch/text/."""
    shutil.copytree(samples.EXAMPLE / "tinytorch", folder / "tinytorch", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tinytorch" / "text").mkdir()
    (folder / "tinytorch" / "text" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "tinytorch" / "core" / "embeddings.py").rename(folder / "tinytorch" / "text" / "embeddings.py")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One grade run over the layouts: gradebook rows by name."""
    folder = tmp_path_factory.mktemp("layouts")
    text_package(folder / "text")
    broken = text_package(folder / "uncommitted")
    (broken / "tinytorch" / "__init__.py").write_text(
        "from .core.tensor import Tensor\nfrom .core.activations import ReLU\n", encoding="utf-8"
    )
    no_module = text_package(folder / "no-module")
    (no_module / "tinytorch" / "text" / "embeddings.py").unlink()
    src = folder / "src-only" / "src" / "11_embeddings"
    src.mkdir(parents=True)
    samples.write(src, "11_embeddings", "percent", mistake="overwrite")
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "120"]) == 0
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


def test_a_text_package_is_graded_by_its_module_not_its_init(graded):
    row = graded["text"]
    assert (row["score"], row["reason"]) == ("100", "")
    assert row["graded"] == (
        "graded tinytorch/text/embeddings.py (the student's tinytorch package; "
        "module 11 where TinyTorch exported it until late 2025)"
    )


def test_an_init_importing_an_uncommitted_module_says_what_embconf_run_says(graded, tmp_path):
    row = graded["uncommitted"]
    assert row["kind"] == "package" and row["score"] == "0"
    assert UNCOMMITTED in row["reason"] and "tinytorch.core.core" not in row["reason"]
    broken = text_package(tmp_path / "student")
    (broken / "tinytorch" / "__init__.py").write_text("from .core.activations import ReLU\n", encoding="utf-8")
    done = run_cli("run", "--impl", f"tinytorch:{broken}", "-q")
    assert done.returncode == 2 and UNCOMMITTED in done.stderr


def test_a_package_init_is_never_the_graded_module(graded):
    row = graded["no-module"]
    assert row["kind"] == "" and row["graded"] == ""
    assert row["reason"] == (
        "not a submission: no tinytorch/core/embeddings.py or tinytorch/text/embeddings.py, "
        "no .py module or notebook in it"
    )


def test_the_course_source_folder_is_graded_as_the_notebook_it_is(graded):
    row = graded["src-only"]
    assert row["kind"] == "percent"
    assert row["graded"] == (
        "graded src/11_embeddings/11_embeddings.py (the notebook exporting core.embeddings "
        "in the course repository's module folder)"
    )
    assert "indexed assignment" in row["top_mistake"]


def test_tinytorch_finds_module_11_in_a_folder_and_by_default(tmp_path):
    """Fresh interpreters: the test process may hold another tinytorch."""
    student = text_package(tmp_path / "student")
    by_folder = run_cli("run", "--impl", f"tinytorch:{student}", "-k", "lookup.backward.*")
    by_default = run_cli("run", "-k", "lookup.backward.*", cwd=student)
    for done, named in ((by_folder, "tinytorch/text/embeddings.py"), (by_default, "tinytorch.text.embeddings")):
        assert done.returncode == 0, done.stderr
        assert f"against {named}" in done.stdout or f"{named} [python]" in done.stdout, done.stdout[-600:]
    (tmp_path / "nothing-here").mkdir()
    nothing = run_cli("run", "--impl", f"tinytorch:{tmp_path}/nothing-here")
    assert nothing.returncode == 2 and "no tinytorch package holding module 11" in nothing.stderr


def test_check_and_gradescope_find_the_text_package(tmp_path):
    import embconf

    student = text_package(tmp_path / "student")
    assert embconf.check(str(student)).score.total == 100
    results = tmp_path / "results.json"
    assert main(["gradescope", "--submission", str(student), "--results", str(results)]) == 0
    assert '"score": 100' in results.read_text(encoding="utf-8")


def test_the_rule_orders_layouts(tmp_path):
    both = text_package(tmp_path / "both")
    shutil.copyfile(samples.MODULE, both / "tinytorch" / "core" / "embeddings.py")
    found = layouts.find_package(both)
    assert found is not None and found.module == layouts.module_path("core.embeddings")
    for course in ("src/11_embeddings", "modules/11_embeddings", "modules/source/11_embeddings"):
        (tmp_path / "repo" / course).mkdir(parents=True)
    assert layouts.course_folder(tmp_path / "repo") == tmp_path / "repo" / "modules" / "11_embeddings"
    pair = [tmp_path / "embeddings.py", tmp_path / "embeddings.ipynb", tmp_path / "other.py"]
    assert layouts.paired_notebooks(pair) == ([pair[1], pair[2]], [pair[0]])
    assert layouts.module_path("tinytorch.text.embeddings").as_posix() == "tinytorch/text/embeddings.py"
    text_package(tmp_path / "two" / "a")
    text_package(tmp_path / "two" / "b")
    with pytest.raises(layouts.LayoutProblem, match="ambiguous: 2 tinytorch packages"):
        layouts.find_package(tmp_path / "two")


def test_an_export_goes_where_its_default_exp_says_with_its_helpers_beside_it(tmp_path):
    from embconf.grading.submissions import classify, stage

    upload = tmp_path / "upload"
    upload.mkdir()
    samples.write(upload, "embeddings", "ipynb", source=samples.module_text(), default_exp="text.embeddings")
    (upload / "embedding_helpers.py").write_text("CHECKED = True\n", encoding="utf-8")
    sub = classify(upload)
    module, exported = stage(sub, tmp_path / "work", samples.EXAMPLE)
    assert exported is not None and exported.module == "text.embeddings"
    assert module == tmp_path / "work" / "tinytorch" / "text" / "embeddings.py"
    assert (module.parent / "__init__.py").is_file() and (module.parent / "embedding_helpers.py").is_file()
    assert (
        sub.graded == "graded embeddings.ipynb (the notebook exporting text.embeddings); helpers: embedding_helpers.py"
    )
