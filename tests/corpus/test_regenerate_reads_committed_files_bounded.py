"""``embconf regenerate --check`` reads the committed fixture files as untrusted input, before it generates: a
FIFO, a device, a directory or non-UTF-8 bytes where a generated file belongs, and an mpmath that is installed but
does not import, are each one line and exit 2, in bounded time; a file the generator does not write is named,
never read, and a committed file the safe reader refuses (an alias) is a difference."""

from __future__ import annotations

import os
import time

import pytest
from helpers import assert_exit, assert_one_line_error, run_cli

from embconf.model.vocabulary import FIXTURES_DIR


@pytest.fixture
def fixtures(tmp_path):
    """A fixture directory of links to the committed files, for a test to replace one of them."""
    folder = tmp_path / "fixtures"
    folder.mkdir()
    for path in FIXTURES_DIR.iterdir():
        (folder / path.name).symlink_to(path)
    return folder


def _replace(folder, name, make):
    (folder / name).unlink()
    make(folder / name)


@pytest.mark.parametrize(
    "name, make, words",
    [
        ("memory.yaml", os.mkfifo, ["memory.yaml", "not a regular file"]),
        ("bags.json", lambda path: path.symlink_to("/dev/zero"), ["bags.json", "not a regular file"]),
        ("MANIFEST.json", lambda path: path.mkdir(), ["MANIFEST.json", "is a directory"]),
        ("rope.yaml", lambda path: path.write_bytes(b"cases: [caf\xe9]\n"), ["rope.yaml", "not UTF-8"]),
    ],
    ids=["fifo", "device", "directory", "not_utf8"],
)
def test_a_committed_file_that_cannot_be_read_is_one_line_before_anything_is_generated(fixtures, name, make, words):
    _replace(fixtures, name, make)
    started = time.monotonic()
    assert_one_line_error(run_cli("regenerate", "--check", "--fixtures", str(fixtures), timeout=60), *words)
    assert time.monotonic() - started < 20  # refused before the generation, which takes longer


def test_an_mpmath_that_does_not_import_is_one_line(tmp_path):
    package = tmp_path / "mpmath"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('a broken install')\n")
    result = run_cli("regenerate", "--check", env={"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert_one_line_error(result, "mpmath is installed but does not import", "RuntimeError", "a broken install")


def test_a_file_the_generator_does_not_write_is_named_never_read_and_an_alias_is_a_difference(fixtures):
    os.mkfifo(fixtures / "extra.yaml")
    _replace(fixtures, "memory.yaml", lambda path: path.write_text("a: &x [1]\nb: *x\n"))
    result = run_cli("regenerate", "--check", "--fixtures", str(fixtures))
    assert_exit(result, 1)
    assert "extra.yaml: not produced by the generator" in result.stderr
    assert "memory.yaml: unreadable" in result.stderr
