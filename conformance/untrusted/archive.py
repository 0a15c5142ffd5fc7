"""Unpacking a zip archive someone else made (a student's upload) without trusting it.

:func:`unpack` refuses the whole archive, in one line naming the first offending member, when a
member would land outside the destination (``../`` parts, an absolute path, a drive letter), is a
symbolic link, a device, a FIFO or a socket, or when the archive exceeds its :class:`ArchiveLimits`: the
number of members, the unpacked size (counted as bytes are written, not as the archive declares) or
the unpacked-to-packed ratio (a zip bomb). Nothing is written outside ``dest``; files are created
exclusively and never through a link; a refused archive leaves ``dest`` empty of what it unpacked.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CHUNK = 1 << 16


class ArchiveRefused(Exception):
    """The archive is not unpacked: one line saying which member or which bound, and why."""


@dataclass(frozen=True)
class ArchiveLimits:
    members: int = 1000
    bytes: int = 50 * 2**20
    ratio: float = 100.0  # unpacked bytes per byte of the archive file


@dataclass(frozen=True)
class Unpacked:
    files: int
    bytes: int


def unpack(archive: Path, dest: Path, limits: ArchiveLimits = ArchiveLimits()) -> Unpacked:
    """Unpack ``archive`` into the empty or new folder ``dest``; ArchiveRefused (and ``dest`` removed) when refused."""
    try:
        packed = archive.stat().st_size
        with zipfile.ZipFile(archive) as handle:
            members = handle.infolist()
            _check_members(members, limits)
            dest.mkdir(parents=True, exist_ok=True)
            try:
                return _extract(handle, members, dest, max(packed, 1), limits)
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)
                raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise ArchiveRefused(f"not a readable zip archive ({str(exc)[:120]})") from None
    except RuntimeError as exc:  # an encrypted member
        raise ArchiveRefused(f"cannot unpack it ({str(exc)[:120]})") from None
    except OSError as exc:
        raise ArchiveRefused(f"cannot unpack it ({exc.strerror or exc})") from None


def member_path(name: str) -> PurePosixPath:
    """The relative path a member unpacks to; ArchiveRefused when it would leave the folder."""
    text = name.replace("\\", "/")
    path = PurePosixPath(text)
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ArchiveRefused(f"member {name[:200]!r} has an absolute path")
    if ".." in path.parts:
        raise ArchiveRefused(f"member {name[:200]!r} points outside its folder ('..')")
    if "\0" in text or not path.parts:
        raise ArchiveRefused(f"member {name[:200]!r} has no usable name")
    return path


def _check_members(members: list[zipfile.ZipInfo], limits: ArchiveLimits) -> None:
    if len(members) > limits.members:
        raise ArchiveRefused(f"{len(members)} members, more than the limit of {limits.members}")
    declared = 0
    for info in members:
        member_path(info.filename)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ArchiveRefused(f"member {info.filename[:200]!r} is a symbolic link")
        if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRefused(f"member {info.filename[:200]!r} is a device, FIFO or socket")
        declared += info.file_size
    if declared > limits.bytes:
        raise ArchiveRefused(f"it unpacks to {declared} bytes, more than the limit of {limits.bytes}")


def _extract(
    handle: zipfile.ZipFile, members: list[zipfile.ZipInfo], dest: Path, packed: int, limits: ArchiveLimits
) -> Unpacked:
    written = files = 0
    budget = min(limits.bytes, int(packed * limits.ratio))
    for info in members:
        relative = member_path(info.filename)
        target = dest.joinpath(*relative.parts)
        if info.is_dir():
            _make_dirs(dest, relative.parts)
            continue
        _make_dirs(dest, relative.parts[:-1])
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            raise ArchiveRefused(f"member {info.filename[:200]!r} appears twice") from None
        with os.fdopen(fd, "wb") as out, handle.open(info) as source:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > budget:
                    what = "limit" if budget == limits.bytes else f"{limits.ratio:g} times the archive's size"
                    raise ArchiveRefused(f"it unpacks to more than {budget} bytes (the {what})")
                out.write(chunk)
        files += 1
    return Unpacked(files, written)


def _make_dirs(dest: Path, parts: tuple[str, ...]) -> None:
    """Create ``dest/parts...`` one level at a time, refusing any level that exists as something else."""
    current = dest
    for part in parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise ArchiveRefused(f"{'/'.join(parts)!r} is both a file and a folder in the archive") from None
