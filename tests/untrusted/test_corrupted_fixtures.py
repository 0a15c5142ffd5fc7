"""Corrupted fixture directories and manifests: no traceback, one line and exit 2 for every command.

Each corruption is generated here into tmp_path (bounded: the largest is a sparse file) and goes through
``embconf run``, ``validate``, ``list`` and ``show``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, assert_one_line_error, run_cli, run_main

ONE_CASE = "lookup.forward.module_example"
FIXTURE = "token_lookup.yaml"


def copy_fixtures(tmp_path: Path) -> Path:
    directory = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", directory)
    return directory


def manifest_of(directory: Path) -> dict:
    return json.loads((directory / "MANIFEST.json").read_text())


def set_manifest(directory: Path, manifest: dict) -> None:
    (directory / "MANIFEST.json").write_text(json.dumps(manifest))


def rehash(directory: Path, name: str = FIXTURE) -> None:
    """Record the (corrupted) file's hash in the manifest: the loader then trusts it and skips validation."""
    import hashlib

    manifest = manifest_of(directory)
    manifest["files"][name]["sha256"] = hashlib.sha256((directory / name).read_bytes()).hexdigest()
    set_manifest(directory, manifest)


def write_fixture(directory: Path, text: str, trusted: bool) -> None:
    (directory / FIXTURE).write_text(text)
    if trusted:
        rehash(directory)


def first_case_edited(edit) -> str:
    """The fixture file's text with its first case changed by ``edit(case) -> case``."""
    document = yaml.safe_load((ROOT / "fixtures" / FIXTURE).read_text())
    document["cases"][0] = edit(document["cases"][0])
    return yaml.safe_dump(document, sort_keys=False)


def _deep_shape(case: dict) -> dict:
    case["inputs"]["ids"] = {"dtype": "int64", "shape": [1] * 65, "data": [0]}
    return case


def _requirements_int(case: dict) -> dict:
    case["requirements"] = 7
    return case


BILLION_LAUGHS = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    + "cases: [*i]\n"
)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _symlink_to(target: str):
    def make(path: Path) -> None:
        path.unlink()
        path.symlink_to(target)

    return make


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _oversized(path: Path) -> None:  # sparse: 17 MiB on paper, nothing on disk
    with open(path, "ab") as handle:
        handle.truncate(17 << 20)


def _edit_manifest(edit):
    def corrupt(directory: Path) -> None:
        manifest = manifest_of(directory)
        edit(manifest)
        set_manifest(directory, manifest)

    return corrupt


def _on_fixture(make):
    return lambda directory: make(directory / FIXTURE)


def _on_manifest(make):
    return lambda directory: make(directory / "MANIFEST.json")


# (id, corrupt(directory), the words of the one-line refusal)
MANIFEST_CORRUPTIONS = [
    (
        "manifest_deep",
        lambda d: (d / "MANIFEST.json").write_text("[" * 100_000 + "]" * 100_000),
        "nested more than 32 levels",
    ),
    ("manifest_not_json", lambda d: (d / "MANIFEST.json").write_bytes(b"\xff\xfe{garbage"), "not valid JSON"),
    ("manifest_a_list", lambda d: (d / "MANIFEST.json").write_text("[1, 2]"), "not a JSON object"),
    ("manifest_directory", _on_manifest(_directory), "the manifest is a directory"),
    ("manifest_fifo", _on_manifest(_fifo), "not a regular file"),
    ("manifest_dev_zero", _on_manifest(_symlink_to("/dev/zero")), "not a regular file"),
    ("entry_not_object", _edit_manifest(lambda m: m["files"].__setitem__(FIXTURE, 3)), "is not an object"),
    (
        "count_a_string",
        _edit_manifest(lambda m: m["files"][FIXTURE].__setitem__("cases", "70")),
        "'cases' '70', not a count",
    ),
    ("total_a_string", _edit_manifest(lambda m: m.__setitem__("total_cases", "many")), "'total_cases' is not a count"),
    (
        "name_escapes",
        _edit_manifest(lambda m: m["files"].__setitem__("../escape.yaml", {"sha256": "0", "cases": 1})),
        "is not a plain file name",
    ),
    ("fixture_directory", _on_fixture(_directory), "the fixture file is a directory"),
    ("fixture_fifo", _on_fixture(_fifo), "not a regular file"),
    ("fixture_dev_zero", _on_fixture(_symlink_to("/dev/zero")), "not a regular file"),
    ("fixture_oversized", _on_fixture(_oversized), "more than the limit of 16777216"),
]

# (id, text of the fixture file, the words of the refusal, the words of validate's problem);
# each runs with the manifest rehashed (trusted, so not schema-validated) and as a modified file
CONTENT_CORRUPTIONS = [
    ("billion_laughs", BILLION_LAUGHS, "anchors and aliases are not allowed", ""),
    ("deep_nesting", "cases: " + "[" * 100_000 + "]" * 100_000, "nested more than 32 levels", ""),
    ("deep_block_nesting", "cases:\n" + "- " * 50_000 + "x\n", "nested more than 32 levels", ""),
    ("python_tag", "cases: !!python/object/apply:os.system [echo hi]\n", "is not allowed", ""),
    ("not_yaml", "cases: [unclosed\n  - : :\n", "not valid YAML", ""),
    ("shape_65_dims", first_case_edited(_deep_shape), "65 dimensions, more than 32", ""),
    (
        "case_not_mapping",
        first_case_edited(lambda case: "just a string"),
        "not a mapping",
        "case #0: 'just a string' is not of type 'object'",
    ),
    (
        "requirements_int",
        first_case_edited(_requirements_int),
        "requirements",
        "7 is not of type 'array' at /cases/0/requirements",
    ),
]


def corrupted(tmp_path: Path, corrupt) -> Path:
    directory = copy_fixtures(tmp_path)
    corrupt(directory)
    return directory


@pytest.mark.parametrize("name, corrupt, words", MANIFEST_CORRUPTIONS, ids=[c[0] for c in MANIFEST_CORRUPTIONS])
def test_a_corrupted_fixture_directory_is_one_line_and_exit_2_for_every_command(tmp_path, capsys, name, corrupt, words):
    directory = str(corrupted(tmp_path, corrupt))
    started = time.monotonic()
    for argv in (
        ["run", "--impl", "reference", "--in-process", "-q"],
        ["list"],
        ["show", ONE_CASE],
        ["run", "--impl", "reference", "--in-process", "-q", "--allow-modified-fixtures"],
    ):
        assert_one_line_error(run_main(capsys, *argv, "--fixtures", directory), words, max_chars=2500)
    code, out, err = run_main(capsys, "validate", "--fixtures", directory)
    assert code == 1 and "Traceback" not in err and words in err, (code, err[-2000:])
    assert "problem" in out
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("trusted", [True, False], ids=["rehashed", "modified"])
@pytest.mark.parametrize(
    "name, text, words, validate_words", CONTENT_CORRUPTIONS, ids=[c[0] for c in CONTENT_CORRUPTIONS]
)
def test_a_corrupted_fixture_file_is_refused_in_one_line_before_anything_expands(
    tmp_path, capsys, name, text, words, validate_words, trusted
):
    directory = copy_fixtures(tmp_path)
    write_fixture(directory, text, trusted)
    run = ["run", "--impl", "reference", "--in-process", "-q", "--fixtures", str(directory)]
    started = time.monotonic()
    expected = words if trusted else validate_words or words
    assert_one_line_error(run_main(capsys, *run, "--allow-modified-fixtures"), expected, max_chars=2500)
    if trusted:  # a consistent manifest: list, show and run trust the file, and its structure is still checked
        for argv in (run, ["list", "--fixtures", str(directory)], ["show", ONE_CASE, "--fixtures", str(directory)]):
            assert_one_line_error(run_main(capsys, *argv), words, max_chars=2500)
    else:
        assert_one_line_error(run_main(capsys, *run), "modified since `embconf regenerate`", max_chars=2500)
    code, out, err = run_main(capsys, "validate", "--fixtures", str(directory))
    assert code == 1 and "Traceback" not in err, (code, err[-2000:])
    assert all(FIXTURE in line or "MANIFEST" in line for line in err.strip().splitlines()), err[-2000:]
    assert (validate_words or words) in err, err[-2000:]
    assert time.monotonic() - started < 60


def test_fixtures_naming_a_file_is_one_line(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("x")
    for argv in (["list"], ["show", ONE_CASE], ["run", "--impl", "reference", "--in-process"], ["validate"]):
        result = run_main(capsys, *argv, "--fixtures", str(target))
        assert_one_line_error(result, "not a fixture directory (it is a file)", code=1 if argv == ["validate"] else 2)


def test_validate_reports_a_yaml_directory_and_a_stray_file_and_goes_on(tmp_path, capsys):
    directory = copy_fixtures(tmp_path)
    (directory / "stray.yaml").mkdir()
    code, out, err = run_main(capsys, "validate", "--fixtures", str(directory))
    assert code == 1, err
    assert "stray.yaml: not listed in MANIFEST.json" in err and "stray.yaml: the fixture file is a directory" in err
    committed = sum(entry["cases"] for entry in json.loads((directory / "MANIFEST.json").read_text())["files"].values())
    assert out.startswith(f"{committed} cases checked, 2 problems")  # every real file was still checked


def test_validate_fails_a_manifest_whose_count_disagrees(tmp_path, capsys):
    directory = copy_fixtures(tmp_path)
    manifest = manifest_of(directory)
    held = manifest["files"][FIXTURE]["cases"]  # as committed, validate agrees (the corpus tests hold it)
    manifest["files"][FIXTURE]["cases"] = held + 1
    set_manifest(directory, manifest)
    code, out, err = run_main(capsys, "validate", "--fixtures", str(directory))
    assert code == 1 and f"{FIXTURE}: holds {held} cases, MANIFEST.json records {held + 1}" in err


def test_a_fifo_fixture_hangs_no_command(tmp_path):
    directory = corrupted(tmp_path, _on_fixture(_fifo))
    assert_one_line_error(run_cli("list", "--fixtures", str(directory), timeout=60), "not a regular file")
