"""``embconf regenerate --check``: what differs between a fresh generation and the committed fixture files.

The committed files are untrusted input (anyone may have replaced one): each is read bounded
(:func:`~embconf.untrusted.read.read_bounded`: a regular file of at most ``MAX_FIXTURE_BYTES``; a FIFO is never
waited on, a device never read) and decoded as UTF-8, and a YAML file's cases read by the suite's own bounded
reader (no aliases, bounded nesting), all before anything is generated: a file the generator writes that cannot be
read so is one line (:class:`FixtureError`, exit 2) at once, not after the generation. A file it does not write is
named, never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from embconf.corpus.fixtures import MAX_FIXTURE_BYTES, FixtureError
from embconf.untrusted.read import InputError, load_yaml, read_bounded

GENERATED_PATTERNS = ("*.yaml", "*.json")  # what the generator writes into a fixture directory


def read_committed(directory: Path, names: list[str]) -> dict[str, str]:
    """{name: text} of each of ``names`` present in ``directory``; FixtureError (one line) for one that is not a
    regular UTF-8 file of at most MAX_FIXTURE_BYTES."""
    texts: dict[str, str] = {}
    for name in names:
        path = directory / name
        try:
            raw = read_bounded(path, MAX_FIXTURE_BYTES, "fixture file")
        except FileNotFoundError:
            continue
        except InputError as exc:
            raise FixtureError(str(exc)) from None
        try:
            texts[name] = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FixtureError(
                f"{path}: not UTF-8 text (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"
            ) from None
    return texts


def committed_cases(name: str, text: str) -> Optional[dict[str, Any]]:
    """{case id: case} of a committed YAML fixture file, read bounded; None when it cannot be read as one."""
    try:
        document = load_yaml(text, name)
    except InputError:
        return None
    cases = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in cases):
        return None
    return {case["id"]: case for case in cases}


def differences(directory: Path) -> list[str]:
    """What differs between a fresh generation and ``directory``: one line per file or case. The committed files
    are read first (:func:`read_committed`); FixtureError for one that cannot be."""
    from embconf.reference import generate

    committed = read_committed(directory, generate.file_names())
    present = {path.name for pattern in GENERATED_PATTERNS for path in directory.glob(pattern)}
    fresh = generate.render_all()
    problems: list[str] = []
    for name, text in fresh.items():
        if name not in committed:
            problems.append(f"{name}: missing")
        elif committed[name] != text:
            problems += _file_differences(name, text, committed[name])
    problems += [f"{name}: not produced by the generator" for name in sorted(present - set(fresh))]
    return problems


def _file_differences(name: str, text: str, committed: str) -> list[str]:
    if not name.endswith(".yaml"):
        return [f"{name}: differs"]
    from embconf.reference.generate import read_back

    fresh_cases = {c["id"]: c for c in read_back(text)["cases"]}
    old_cases = committed_cases(name, committed)
    if old_cases is None:  # a hand-broken file is itself the difference
        return [f"{name}: unreadable"]
    changed = sorted(cid for cid in fresh_cases.keys() & old_cases.keys() if fresh_cases[cid] != old_cases[cid])
    problems = [f"{name}: case {cid} differs" for cid in changed]
    problems += [f"{name}: case {cid} is new" for cid in sorted(fresh_cases.keys() - old_cases.keys())]
    problems += [f"{name}: case {cid} is gone" for cid in sorted(old_cases.keys() - fresh_cases.keys())]
    if not (changed or fresh_cases.keys() ^ old_cases.keys()):
        problems.append(f"{name}: differs in formatting only")
    return problems
