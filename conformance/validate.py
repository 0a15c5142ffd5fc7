"""``embconf validate``: every fixture file against the schema, the spec and the manifest."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

from .fixtures import MANIFEST_NAME, FixtureError, read_manifest, validate_document
from .spec import SPEC_DIR

REQUIREMENT_DEFINITION = re.compile(r"\*\*(EMB-[A-Z]+-[A-Z]?[0-9]+)\*\*")


def defined_requirements(spec_text: str | None = None) -> set[str]:
    """Requirement ids the spec defines (written in bold: **EMB-FWD-1**)."""
    text = spec_text if spec_text is not None else (SPEC_DIR / "SPEC.md").read_text()
    return set(REQUIREMENT_DEFINITION.findall(text))


def validate_directory(directory: Path) -> tuple[list[str], int]:
    """(problems, number of cases checked); each problem names its file, line and case."""
    problems: list[str] = []
    try:
        manifest, _ = read_manifest(directory)
    except FixtureError as exc:
        return [str(exc)], 0
    known = defined_requirements()
    count = 0
    listed = set(manifest["files"])
    for path in sorted(directory.glob("*.yaml")):
        if path.name not in listed:
            problems.append(f"{path}: not listed in {MANIFEST_NAME}")
        raw = path.read_bytes()
        entry = manifest["files"].get(path.name, {})
        if entry and hashlib.sha256(raw).hexdigest() != entry.get("sha256"):
            problems.append(f"{path}: content differs from the hash in {MANIFEST_NAME} (edited by hand?)")
        try:
            document = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            problems.append(f"{path}: not valid YAML: {exc}")
            continue
        text = raw.decode("utf-8", "replace")
        problems += [f"{path}: {p}" for p in validate_document(document, text)]
        cases = document.get("cases", []) if isinstance(document, dict) else []
        count += len(cases) if isinstance(cases, list) else 0
        for case in cases if isinstance(cases, list) else []:
            if isinstance(case, dict):
                unknown = [r for r in case.get("requirements", []) if r not in known]
                if unknown:
                    problems.append(f"{path}: case {case.get('id')}: requirement(s) {unknown} not defined in spec/SPEC.md")
    for name in sorted(listed - {p.name for p in directory.glob("*.yaml")}):
        problems.append(f"{directory / name}: listed in {MANIFEST_NAME} but missing")
    return problems, count
