"""`embconf regenerate` writes the fixtures as regular files only: a link, a FIFO or a device standing where a
fixture file goes is refused in one line (exit 2) before any golden is computed, and the writer itself never
follows a link nor waits on a FIFO."""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import ROOT, assert_one_line_error, run_cli

from embconf.reference.generate import write_regular


@pytest.fixture
def fixtures(tmp_path):
    folder = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", folder)
    return folder


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_non_regular_fixture_file_is_refused_before_anything_is_written(fixtures, tmp_path, kind):
    target = fixtures / "token_lookup.yaml"
    target.unlink()
    outside = tmp_path / "outside.yaml"
    outside.write_text("kept\n")
    os.mkfifo(target) if kind == "fifo" else target.symlink_to(outside)
    done = run_cli("regenerate", "--fixtures", str(fixtures), timeout=120)
    assert_one_line_error(done, "token_lookup.yaml", "not a regular file")
    assert outside.read_text() == "kept\n"  # nothing written through the link
    assert (fixtures / "bags.yaml").read_text() == (ROOT / "fixtures" / "bags.yaml").read_text()  # nor elsewhere


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="needs O_NOFOLLOW")
def test_the_writer_never_follows_a_link_nor_waits_on_a_fifo(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    link, fifo, plain = tmp_path / "link.yaml", tmp_path / "fifo.yaml", tmp_path / "plain.yaml"
    link.symlink_to(outside)
    os.mkfifo(fifo)
    for path in (link, fifo):
        with pytest.raises(OSError):
            write_regular(path, "golden\n")
    assert outside.read_text() == "kept\n"
    plain.write_text("a longer text than the new one\n")
    write_regular(plain, "golden\n")
    assert plain.read_text() == "golden\n"
