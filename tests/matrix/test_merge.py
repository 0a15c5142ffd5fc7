"""``embconf matrix --merge``: one matrix from column files measured in several environments, each column
keeping the environment it was measured in; files that cannot be merged are refused in one line (exit 2)."""

from __future__ import annotations

import json

import pytest
from helpers import IMPLS, ROOT, assert_exit, run_cli

from embconf.matrix import html, markdown
from embconf.model.schemas import validator

WRONG = f"tinytorch:{(IMPLS / 'wrong_overwrite.py').relative_to(ROOT)}"
ELSEWHERE = {"python": "3.9.18", "numpy": "1.26.4", "platform": "Linux-ci-mindspore"}  # e.g. MindSpore's numpy < 2


@pytest.fixture(scope="module")
def columns(tmp_path_factory):
    """Two column files: the reference on forward lookups here, a wrong module on lookups and positions 'elsewhere'."""
    out = tmp_path_factory.mktemp("columns")
    for name, impl, selection in (
        ("here", "reference", ["lookup.forward.*"]),
        ("elsewhere", WRONG, ["lookup.*", "pos.*"]),
    ):
        args = [arg for pattern in selection for arg in ("--select", pattern)]
        done = run_cli("matrix", "--impl", impl, *args, "--json", str(out / f"{name}.json"))
        assert_exit(done, 0)
    elsewhere = json.loads((out / "elsewhere.json").read_text())
    elsewhere["implementations"][0]["environment"] = ELSEWHERE  # as if measured in another environment
    (out / "elsewhere.json").write_text(json.dumps(elsewhere))
    return out


def _merge(columns, *names, extra=()):
    args = [arg for name in names for arg in ("--merge", str(columns / name))]
    out = columns / "merged.json"
    out.unlink(missing_ok=True)
    done = run_cli("matrix", *args, "--json", str(out), *extra)
    return done, (json.loads(out.read_text()) if out.exists() else None)


def test_two_column_files_merge_into_one_matrix_with_each_environment(columns):
    done, doc = _merge(columns, "here.json", "elsewhere.json")
    assert done.returncode == 0, done.stderr
    validator("matrix").validate(doc)
    assert [c["impl"] for c in doc["implementations"]] == ["reference", WRONG]
    assert doc["implementations"][1]["environment"] == ELSEWHERE
    assert doc["implementations"][0]["environment"] == json.loads((columns / "here.json").read_text())["environment"]
    assert doc["sources"] == ["here.json", "elsewhere.json"]  # no folder of the machine that merged them
    rows = {req["id"]: req["cells"] for section in doc["sections"] for req in section["requirements"]}
    assert rows["EMB-POS-1"]["reference"]["status"] == "n/a"  # its file selected no position case
    assert rows["EMB-BWD-2"][WRONG]["status"] == "fail" and rows["EMB-FWD-1"]["reference"]["status"] == "pass"
    text = markdown.render(doc)
    assert "measured with Python 3.9.18, NumPy 1.26.4 on Linux-ci-mindspore" in text
    assert "Merged from 2 column files" in text
    assert "measured with Python 3.9.18, NumPy 1.26.4" in html.render(doc)
    assert "does not conform" in done.stdout and "conforms to spec" in done.stdout


@pytest.mark.parametrize(
    "names, words",
    [
        (("here.json", "here.json"), "'reference' is in both"),
        (("here.json", "other_fixtures.json"), "was measured on other fixtures"),
        (("here.json", "not_a_matrix.json"), "is not a matrix JSON"),
        (("here.json", "missing.json"), "missing.json"),
    ],
)
def test_files_that_cannot_be_merged_are_refused_in_one_line(columns, names, words):
    other = json.loads((columns / "elsewhere.json").read_text())
    other["fixtures"]["manifest_sha256"] = "f" * 64
    (columns / "other_fixtures.json").write_text(json.dumps(other))
    (columns / "not_a_matrix.json").write_text(json.dumps({"report_format": 1}))
    done, doc = _merge(columns, *names)
    assert done.returncode == 2 and doc is None
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr


def test_run_or_merge_not_both(columns):
    done = run_cli("matrix", "--impl", "reference", "--merge", str(columns / "here.json"))
    assert done.returncode == 2 and "not both" in done.stderr and len(done.stderr.strip().splitlines()) == 1
