"""Zip uploads unpacked without trusting them: every hostile archive is refused in one line, and nothing
is written outside the destination folder."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from embconf.untrusted.archive import ArchiveLimits, ArchiveRefused, unpack


def make_zip(path: Path, members: list[tuple[str, bytes]], modes: dict[str, int] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if modes and name in modes:
                info.external_attr = modes[name] << 16
            handle.writestr(info, data)
    return path


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def test_a_plain_zip_unpacks_its_folders_and_files(tmp_path):
    archive = make_zip(tmp_path / "a.zip", [("hw/embeddings.py", b"x = 1\n"), ("hw/utils.py", b"y = 2\n")])
    done = unpack(archive, tmp_path / "out")
    assert files_under(tmp_path / "out") == {"hw", "hw/embeddings.py", "hw/utils.py"}
    assert (done.files, done.bytes) == (2, 12)


@pytest.mark.parametrize(
    "members, modes, says",
    [
        ([("../evil.py", b"x")], None, "points outside its folder"),
        ([("hw/../../evil.py", b"x")], None, "points outside its folder"),
        ([("..\\evil.py", b"x")], None, "points outside its folder"),
        ([("/tmp/evil.py", b"x")], None, "absolute path"),
        ([("C:/evil.py", b"x")], None, "absolute path"),
        ([("link", b"/etc/passwd")], {"link": stat.S_IFLNK | 0o777}, "symbolic link"),
        ([("tty", b"")], {"tty": stat.S_IFCHR | 0o644}, "device, FIFO or socket"),
        ([("fifo", b"")], {"fifo": stat.S_IFIFO | 0o644}, "device, FIFO or socket"),
        ([("a.py", b"1"), ("a.py", b"2")], None, "appears twice"),
        ([("a", b"1"), ("a/b.py", b"2")], None, "both a file and a folder"),
    ],
)
def test_a_hostile_member_refuses_the_archive_and_nothing_lands_outside(tmp_path, members, modes, says):
    archive = make_zip(tmp_path / "evil.zip", members, modes)
    dest = tmp_path / "box" / "out"
    before = files_under(tmp_path)
    with pytest.raises(ArchiveRefused, match=says) as refused:
        unpack(archive, dest)
    assert "\n" not in str(refused.value)
    assert files_under(tmp_path) - before <= {"box", "box/out"}
    assert not dest.exists() or files_under(dest) == set()


def test_too_many_members_is_refused(tmp_path):
    archive = make_zip(tmp_path / "many.zip", [(f"f{n}.py", b"") for n in range(11)])
    with pytest.raises(ArchiveRefused, match="11 members, more than the limit of 10"):
        unpack(archive, tmp_path / "out", ArchiveLimits(members=10))


def test_a_declared_size_over_the_limit_is_refused_before_anything_is_written(tmp_path):
    archive = make_zip(tmp_path / "big.zip", [("big.bin", b"\0" * 5000)])
    with pytest.raises(ArchiveRefused, match="unpacks to 5000 bytes, more than the limit of 4000"):
        unpack(archive, tmp_path / "out", ArchiveLimits(bytes=4000))
    assert not (tmp_path / "out").exists()


def test_a_zip_bomb_is_refused_by_the_bytes_written_and_removed(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", [("zeros.bin", b"\0" * 2_000_000)])
    assert archive.stat().st_size < 20_000  # highly compressible: a ratio over 100
    with pytest.raises(ArchiveRefused, match="100 times the archive's size"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_zip_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(ArchiveRefused, match="not a readable zip archive"):
        unpack(fake, tmp_path / "out")
