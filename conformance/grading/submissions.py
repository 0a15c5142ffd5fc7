"""What a folder of submissions holds: one submission per entry, named by its file or folder name,
and each one laid out as a ``tinytorch`` package ready to run (:func:`stage`).

Kinds: ``package`` (a folder holding a tinytorch package with module 11, used whole: :mod:`.layouts`
says where module 11 may be), ``module`` (a single
``embeddings.py``), ``percent`` (a jupytext percent-format ``.py`` notebook) and ``ipynb`` (a Jupyter
notebook). A folder or a zip (unpacked safely, :mod:`.uploads`) counts as the package it holds, else
as the file the upload rule grades, with its other modules as helpers. Modules and notebooks are
placed as ``tinytorch/core/embeddings.py`` into a copy of the base package (``--base``), which gives
them ``tinytorch.core.tensor`` and ``autograd``. Anything else is a submission with a problem, graded
0 with the reason: it is listed, never dropped. One the grader may not read is the TA's to fix:
:class:`UnreadableSubmission` (exit 2). No link is followed out of a submission (:mod:`.contained`): an entry
that is a link is not a submission, and a package's links out of it are left out and named in its note.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Optional

from embconf.adapters import tinytorch_layouts as layouts
from embconf.grading import contained
from embconf.grading.contained import inside
from embconf.grading.notebook import Exported, NotebookError, export, is_percent_notebook
from embconf.grading.uploads import (
    DEFAULT_RULE,
    SKIPPED_NAMES,
    SOURCE_SUFFIXES,
    UploadProblem,
    UploadRule,
    choose,
    content_root,
    describe,
    unzip,
    visible,
)
from embconf.model.errors import UserError

MODULE_PATH = Path("tinytorch", "core", "embeddings.py")
BASED_KINDS = ("module", "percent", "ipynb")  # graded on a copy of the base package
MAX_BYTES = 50 * 2**20  # a submission larger than this is not copied (a data file was uploaded with it)
_PACKAGE = Path(__file__).resolve().parents[1]  # embconf: conformance/ in a checkout, site-packages/embconf in a wheel
INSTALLED_EXAMPLE = _PACKAGE / "example_student_data"  # where a wheel carries the example student
# the suite's example student: beside the package in a checkout, inside it (embconf/example_student_data) in a wheel
EXAMPLE_BASE = next(
    (
        base
        for base in (_PACKAGE.parent / "examples" / "tinytorch_student", INSTALLED_EXAMPLE)
        if (base / MODULE_PATH).is_file()
    ),
    _PACKAGE.parent / "examples" / "tinytorch_student",
)


DANGLING = "a link to a file not handed in"
ELSEWHERE = "a link to a file elsewhere on the grading machine (never followed: hand in the file itself)"


class SubmissionProblem(Exception):
    """A submission that cannot be graded: its one-line reason goes into the gradebook."""


class UnreadableSubmission(UserError):
    """A submission the grader may not read (permissions): a setup mistake, one line and exit 2."""


@dataclass
class Submission:
    name: str
    entry: Path
    kind: str = ""  # package, module, percent, ipynb; "" when it is not a submission
    source: Optional[Path] = None  # the package root (package) or the file (the others)
    problem: str = ""
    note: str = ""
    graded: str = ""  # which file is graded and why ("graded hw/embeddings.py (the module named embeddings.py)")
    helpers: tuple[Path, ...] = ()  # the upload's other modules, placed beside the graded one
    module: Path = MODULE_PATH  # where module 11 is in the (staged) package
    package: Optional[Path] = None  # the student's own package a module or notebook is graded in (layouts rule 2)
    root: Optional[Path] = None  # the folder handed in (or unpacked): no link is followed out of it

    @property
    def needs_base(self) -> bool:
        return self.kind in BASED_KINDS and self.package is None


def default_base() -> Optional[Path]:
    """The base package modules and notebooks are graded on without --base: the suite's example student."""
    return EXAMPLE_BASE if (EXAMPLE_BASE / MODULE_PATH).is_file() else None


def discover(folder: Path, exclude: Iterable[Path] = (), rule: UploadRule = DEFAULT_RULE) -> list[Submission]:
    """Every submission in ``folder`` (hidden entries and ``exclude`` skipped), in name order."""
    skip = {Path(p).resolve() for p in exclude}
    entries = [
        e
        for e in sorted(folder.iterdir())
        if not e.name.startswith(".") and e.name not in SKIPPED_NAMES and e.resolve() not in skip
    ]
    found = [classify(entry, rule) for entry in entries]
    _disambiguate(found)
    return found


def classify(entry: Path, rule: UploadRule = DEFAULT_RULE) -> Submission:
    """What one entry of the folder is (a problem, not an exception, when it is not a submission);
    UnreadableSubmission when the grader may not read it."""
    sub = Submission(entry.stem if not entry.is_dir() else entry.name, entry)
    try:
        if entry.is_symlink():  # a link is not a submission: what it points to is no student's hand-in
            raise UploadProblem(f"{DANGLING}: {entry.name}" if not entry.exists() else f"{ELSEWHERE}: {entry.name}")
        is_zip = entry.is_file() and (entry.suffix.lower() == ".zip" or zipfile.is_zipfile(entry))
        if entry.is_dir():
            _classify_folder(sub, entry, rule)
        elif is_zip:
            _classify_folder(sub, unzip(entry, rule, entry.name), rule, f" in {entry.name}")
        else:
            _classify_file(sub, entry)
            sub.graded = f"graded {entry.name}"
    except (UploadProblem, layouts.LayoutProblem) as exc:
        sub.kind, sub.source, sub.problem = "", None, str(exc)
    except PermissionError as exc:
        raise UnreadableSubmission(
            f"cannot read the submission {entry} ({exc.strerror or exc}): give the grader read access"
        ) from None
    _note_left_out(sub)
    return sub


def _note_left_out(sub: Submission) -> None:
    """The links of a package that are not followed (to nothing, out of the submission, a loop) are left out of
    its copy; the note names them, in one line, after what the upload rule left out."""
    package = sub.source if sub.kind == "package" else sub.package
    tree = _package_tree(package, sub.root) if package is not None else None
    notes = [note for note in (sub.note, tree.note() if tree is not None else "") if note]
    sub.note = "; ".join(notes)
    graded = (sub.module.as_posix(), contained.OUTSIDE)
    if sub.kind == "package" and tree is not None and graded in tree.left_out:  # module 11 itself is elsewhere
        sub.kind, sub.problem = "", f"{ELSEWHERE.replace('a link', 'module 11 is a link')}: {graded[0]}"


def _classify_folder(sub: Submission, folder: Path, rule: UploadRule, origin: str = "") -> None:
    sub.root = sub.root or folder
    found = layouts.find_package(folder)
    if found is not None and found.module is not None:
        sub.kind, sub.source, sub.module = "package", found.root, Path(found.module)
        sub.graded = f"graded {(found.root / found.module).relative_to(folder).as_posix()}{origin} ({found.why})"
        return
    course = layouts.course_folder(folder)
    top = course or content_root(folder)
    archives = [f for f in visible(top) if f.is_file() and f.suffix.lower() == ".zip" and inside(f, sub.root)]
    if not origin and len(archives) == 1 and not any(f.suffix in SOURCE_SUFFIXES for f in visible(top)):
        inner = unzip(archives[0], rule, f"{sub.entry.name}-{archives[0].name}")  # Gradescope keeps a zip as uploaded
        _classify_folder(sub, inner, rule, f" in {archives[0].name}")
        return
    choice = choose(top, rule, sub.root)
    sub.note = choice.left_out
    _classify_file(sub, choice.file)
    sub.helpers = choice.helpers
    sub.package = layouts.own_package(folder) if course else None
    if course:
        home = ", run in the student's own tinytorch package" if sub.package else ""
        rule_said, beside, skipped = choice.why.partition(";")
        choice = replace(choice, why=f"{rule_said} in the course repository's module folder{home}{beside}{skipped}")
    sub.graded = describe(choice, folder, origin)


def _classify_file(sub: Submission, entry: Path) -> None:
    if entry.suffix == ".ipynb":
        sub.kind, sub.source = "ipynb", entry
    elif entry.suffix == ".py":
        text = entry.read_text(encoding="utf-8", errors="replace")
        sub.kind, sub.source = ("percent" if is_percent_notebook(text) else "module"), entry
    else:
        what = f"a {entry.suffix} file" if entry.suffix else "a file without an extension"
        raise UploadProblem(
            f"not a submission: {what}; expected a tinytorch package folder, a .py module or notebook, "
            "an .ipynb notebook, or a zip of one"
        )


def _disambiguate(found: list[Submission]) -> None:
    """Entries that share a name (alice.py and alice.ipynb; Alice and alice, which collide on a
    case-insensitive disk) are named by their entry name, with ``~N`` where even that collides."""
    groups: dict[str, list[Submission]] = {}
    for sub in found:
        groups.setdefault(sub.name.casefold(), []).append(sub)
    for key, subs in groups.items():
        if len(subs) < 2:
            continue
        full = [sub.entry.name.casefold() for sub in subs]
        for number, sub in enumerate(subs, 1):
            others = ", ".join(o.entry.name for o in subs if o is not sub)
            sub.name = sub.entry.name if full.count(sub.entry.name.casefold()) == 1 else f"{sub.entry.name}~{number}"
            sub.note = f"duplicate name {key!r} (also {others}): named by its entry name"


def content_hash(sub: Submission, base: Optional[Path], salt: str) -> str:
    """A digest of everything the grade depends on: the submission's files, the base package (for
    modules and notebooks) and ``salt`` (suite version, fixtures, limits)."""
    digest = hashlib.sha256(f"{sub.kind}\0{sub.problem}\0{sub.graded}\0{salt}\0".encode())
    if sub.entry.is_symlink():  # not followed: the link itself is what was handed in
        digest.update(os.readlink(sub.entry).encode(errors="replace"))
    elif sub.entry.is_dir():
        _hash_files(digest, contained.walk(sub.entry, sub.entry).files)
    else:
        _hash_files(digest, [(PurePosixPath(sub.entry.name), sub.entry)])
    if base is not None and sub.needs_base:
        _hash_files(digest, [(PurePosixPath(p.relative_to(base).as_posix()), p) for p in _files(base)])
    return digest.hexdigest()


def _hash_files(digest: Any, files: list[tuple[PurePosixPath, Path]]) -> None:
    for name, path in files:
        digest.update(name.as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not _ignored(p.relative_to(root).parts))


def _ignored(parts: tuple[str, ...]) -> bool:
    return any(part in SKIPPED_NAMES or part.endswith(".pyc") for part in parts)


def stage(sub: Submission, work: Path, base: Optional[Path]) -> tuple[Path, Optional[Exported]]:
    """Lay the submission out under ``work`` as a tinytorch package: (path of its embeddings.py, the
    notebook export or None). SubmissionProblem with a one-line reason when it cannot be."""
    if sub.problem:
        raise SubmissionProblem(sub.problem)
    assert sub.source is not None
    if work.exists():
        shutil.rmtree(work)
    exported = None
    target = work / sub.module
    if sub.kind == "package":
        _copy_package(sub.source, work, sub.root or sub.source)
        return target, exported
    if sub.package is not None:  # the student's own package, from the upload: no link followed out of it
        _copy_package(sub.package, work, sub.root or sub.package)
    elif base is not None:
        _copy_package(base, work)
    else:
        raise SubmissionProblem(
            f"a {sub.kind} submission needs a base package: give --base PATH (a folder holding tinytorch/)"
        )
    if sub.kind == "module":
        shutil.copyfile(sub.source, target)
    else:
        try:
            exported = export(sub.source)
        except NotebookError as exc:
            raise SubmissionProblem(str(exc)) from None
        target = _exported_module(work, exported)
        target.write_text(exported.source, encoding="utf-8")
    _place_helpers(sub.helpers, target.parent, work)
    return target, exported


def _exported_module(work: Path, exported: Exported) -> Path:
    """Where nbdev would write the export in the staged package (its folder made a package if it is not one)."""
    target = work / layouts.module_path(exported.module)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not (target.parent / layouts.INIT).exists():
        (target.parent / layouts.INIT).write_text("", encoding="utf-8")
    return target


def _place_helpers(helpers: tuple[Path, ...], beside: Path, work: Path) -> None:
    """Each helper module beside the graded one (``from .utils import f``) and at the package root
    (``import utils``), never over a file the base package has."""
    for helper in helpers:
        if helper.stem == "tinytorch":
            continue
        for folder in (beside, work):
            if not (folder / helper.name).exists():
                shutil.copyfile(helper, folder / helper.name)


def _copy_package(root: Path, work: Path, submitted: Optional[Path] = None) -> None:
    """Copy ``root/tinytorch`` (only the package, without caches) to ``work/tinytorch``; a package handed in
    (``submitted``: the folder handed in) as :func:`contained.walk` finds it, no link followed out of it."""
    package = root / "tinytorch"
    if not (package / "core").is_dir():
        raise SubmissionProblem(f"{root.name}: no tinytorch/core package")
    if submitted is None:  # the base package: the course's own
        ignore = shutil.ignore_patterns(*contained.SKIPPED, "*.pyc")
        shutil.copytree(package, work / "tinytorch", ignore=ignore, ignore_dangling_symlinks=True)
        return
    tree = _package_tree(root, submitted)
    if tree.size > MAX_BYTES or tree.truncated:
        held = f"{tree.size / 2**20:.0f} MB" if not tree.truncated else f"more than {contained.MAX_FILES} files"
        raise SubmissionProblem(f"too large: the tinytorch package holds {held} (at most {MAX_BYTES // 2**20} MB)")
    contained.copy(tree, work)


def _package_tree(root: Path, submitted: Optional[Path]) -> contained.Tree:
    """The files of ``root/tinytorch`` as copied: links followed only inside ``submitted``."""
    return contained.walk(root / "tinytorch", submitted or root)
