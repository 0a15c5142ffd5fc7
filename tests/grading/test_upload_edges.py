"""Uploads and rosters as they come: a correct package holding a dangling link (a data file not handed in) is
graded with the link named in one line; a roster CSV with a stray carriage return is one line naming the file
and the row, exit 2."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402


def test_a_dangling_link_is_named_and_the_rest_graded(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    package = samples.write(folder, "ada", "package")
    (package / "tinytorch" / "data.npy").symlink_to(tmp_path / "not-handed-in.npy")
    (folder / "bo.py").symlink_to(tmp_path / "nowhere.py")  # an entry that is itself a dangling link
    out = tmp_path / "out"
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1"]) == 0
    rows = {row["name"]: row for row in csv.DictReader((out / "gradebook.csv").read_text().splitlines())}
    assert rows["ada"]["score"] == "100", rows["ada"]
    assert rows["ada"]["note"] == "ignored a link to a file not handed in: tinytorch/data.npy"
    assert rows["bo"]["score"] == "0" and rows["bo"]["reason"] == "a link to a file not handed in: bo.py"


def test_a_roster_with_a_stray_carriage_return_is_one_line(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    samples.write(folder, "ada", "module")
    roster = tmp_path / "roster.csv"
    roster.write_bytes(b"submission,sid,email\nada,1,ada@x.edu\nbo,2,b\ro@x.edu\n")
    assert main(["grade", str(folder), "--out", str(tmp_path / "out"), "--roster", str(roster)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(roster) in err and "row 3" in err, err
    assert not (tmp_path / "out" / "gradebook.csv").exists()
