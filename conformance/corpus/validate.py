"""``embconf validate``: every fixture file against the schema, the spec and the manifest."""

from __future__ import annotations

import hashlib
from pathlib import Path

from embconf.corpus.fixtures import MANIFEST_NAME, FixtureError, parse_yaml, read_fixture_bytes, read_manifest
from embconf.corpus.semantics import validate_document
from embconf.model.vocabulary import requirement_subjects
from embconf.untrusted.text import one_line


def defined_requirements() -> set[str]:
    """Requirement ids the spec defines (``spec/vocabulary.json``, checked against SPEC.md by the tests)."""
    return set(requirement_subjects())


def validate_directory(directory: Path) -> tuple[list[str], int]:
    """(problems, number of cases checked); each problem names its file, line and case.

    Every malformation is reported, none raises: a manifest that cannot be read is the only problem
    reported; a file that cannot be read or parsed is one problem and the others are still checked.
    """
    try:
        manifest, _ = read_manifest(directory)
    except FixtureError as exc:
        return [str(exc)], 0
    known = defined_requirements()
    problems: list[str] = []
    count = 0
    listed = manifest["files"]
    present = sorted(directory.glob("*.yaml"))
    for path in present:
        if path.name not in listed:
            problems.append(f"{path}: not listed in {MANIFEST_NAME}")
        try:
            raw = read_fixture_bytes(path)
            document = parse_yaml(path, raw)
        except FixtureError as exc:
            problems.append(str(exc))
            continue
        entry = listed.get(path.name)
        if entry and hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            problems.append(f"{path}: content differs from the hash in {MANIFEST_NAME} (edited by hand?)")
        problems += [f"{path}: {one_line(p)}" for p in validate_document(document, raw.decode("utf-8", "replace"))]
        cases = document.get("cases") if isinstance(document, dict) else None
        cases = cases if isinstance(cases, list) else []
        count += len(cases)
        if entry and len(cases) != entry.get("cases", len(cases)):
            problems.append(f"{path}: holds {len(cases)} cases, {MANIFEST_NAME} records {entry['cases']}")
        for case in cases:
            requirements = case.get("requirements") if isinstance(case, dict) else None
            if isinstance(requirements, list):
                unknown = [r for r in requirements if isinstance(r, str) and r not in known]
                if unknown:
                    problems.append(
                        f"{path}: case {one_line(str(case.get('id')), 100)}: requirement(s) {unknown} not defined by the spec (spec/vocabulary.json)"
                    )
    for name in sorted(set(listed) - {p.name for p in present}):
        problems.append(f"{directory / name}: listed in {MANIFEST_NAME} but missing")
    return problems, count
