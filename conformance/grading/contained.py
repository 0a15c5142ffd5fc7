"""A submission's files, never followed out of it: what :func:`walk` finds under a folder is what staging copies,
what the size limit counts and what the content hash reads.

A symbolic link inside the submission is followed only to a file or folder inside it (the submission's own
``root``); a link out of it (to a file elsewhere on the grading machine: another student's work, the solution), a
link to nothing (a data file not handed in), a link back into a folder holding it (a loop) and anything that is no
regular file or folder (a FIFO, a device) are left out, each named once in the submission's note. A walk stops at
:data:`MAX_FILES` files (a tree of links that repeats itself is counted as it would be copied).
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_FILES = 20_000  # files a submission's package may hold (as copied, links to inside folders included)
SKIPPED = frozenset({"__pycache__", ".ipynb_checkpoints"})
DANGLING = "to a file not handed in"
OUTSIDE = "out of the submission (never followed)"
LOOP = "back into a folder holding it (a loop)"
SPECIAL = "that is no regular file or folder (a FIFO, a device, a socket)"


@dataclass
class Tree:
    """What a walk found: each file as (where it goes, relative; the real file it is read from), what was left out."""

    files: list[tuple[PurePosixPath, Path]] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (relative name, why: one of the texts above)
    size: int = 0
    truncated: bool = False  # more than MAX_FILES files

    def note(self) -> str:
        """'ignored a link to a file not handed in: tinytorch/data.npy; ignored 2 links out of ...: a, b', or ''."""
        groups: dict[str, list[str]] = {}
        for name, why in self.left_out:
            groups.setdefault(why, []).append(name)
        parts = []
        for why, names in groups.items():
            noun = "file" if why == SPECIAL else "link"
            links = f"a {noun}" if len(names) == 1 else f"{len(names)} {noun}s"
            listed = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            parts.append(f"ignored {links} {why}: {listed}")
        return "; ".join(parts)


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, every link on the way resolved, is ``root`` or under it."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def walk(folder: Path, root: Path) -> Tree:
    """Every file under ``folder`` as staging copies it, links followed only inside ``root``."""
    tree = Tree()
    _walk(folder, PurePosixPath(folder.name), Path(os.path.realpath(root)), (Path(os.path.realpath(folder)),), tree)
    return tree


def _walk(folder: Path, at: PurePosixPath, root: Path, holding: tuple[Path, ...], tree: Tree) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in SKIPPED or entry.name.endswith(".pyc"):
            continue
        if tree.truncated:
            return
        name, real = at / entry.name, Path(os.path.realpath(entry.path))
        try:
            mode = os.stat(entry.path).st_mode  # through the link, if it is one
        except OSError:
            tree.left_out.append((name.as_posix(), DANGLING if entry.is_symlink() else SPECIAL))
            continue
        if entry.is_symlink() and not real.is_relative_to(root):
            tree.left_out.append((name.as_posix(), OUTSIDE))
        elif stat.S_ISDIR(mode):
            if any(folder.is_relative_to(real) for folder in holding):  # the link leads to where it is
                tree.left_out.append((name.as_posix(), LOOP))
            else:
                _walk(Path(entry.path), name, root, (*holding, real), tree)
        elif stat.S_ISREG(mode):
            tree.files.append((name, real))
            tree.size += os.stat(real).st_size
            tree.truncated = len(tree.files) > MAX_FILES
        else:
            tree.left_out.append((name.as_posix(), SPECIAL))


def copy(tree: Tree, dest: Path) -> None:
    """Copy the walked files under ``dest`` (each opened without following a link put in its place since)."""
    for relative, real in tree.files:
        target = dest.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            source = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue  # gone, or a link now: not copied
        with os.fdopen(source, "rb") as reading, open(target, "wb") as writing:
            shutil.copyfileobj(reading, writing)
