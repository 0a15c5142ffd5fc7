"""Loading the golden fixtures: safe YAML, integrity against the manifest, lazy array decoding.

A run trusts a fixture file only when its SHA-256 matches ``MANIFEST.json`` (written
by ``embconf regenerate``); a modified file is refused unless explicitly allowed, and
is then validated against the fixture schema before use.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

import yaml

from .encoding import EncodingError, decode_array, is_array
from .spec import FIXTURES_DIR, operations, spec_version

MANIFEST_NAME = "MANIFEST.json"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FixtureError(Exception):
    """A fixture problem: the run cannot be trusted (exit code 2)."""


@dataclass(frozen=True)
class Case:
    """One golden case. Arrays stay encoded until asked for."""

    id: str
    description: str
    requirements: tuple[str, ...]
    features: tuple[str, ...]
    operation: str
    raw_inputs: Mapping[str, Any] = field(repr=False)
    raw_expected: Mapping[str, Any] = field(repr=False)
    tolerance: Mapping[str, Any] = field(repr=False)
    source: str = ""

    @property
    def expected_error(self) -> Optional[str]:
        return self.raw_expected.get("error")

    def inputs(self) -> dict[str, Any]:
        """Fresh decoded inputs (new arrays on every call, so nothing an implementation does leaks back)."""
        return {name: decode_value(value) for name, value in self.raw_inputs.items()}

    @cached_property
    def expected_outputs(self) -> dict[str, Any]:
        return {name: decode_value(value) for name, value in self.raw_expected.get("outputs", {}).items()}

    @property
    def dtypes(self) -> set[str]:
        """The float dtypes the case exercises (for capability matching)."""
        found = {v["dtype"] for v in self.raw_inputs.values() if is_array(v) and v["dtype"].startswith("float")}
        if isinstance(self.raw_inputs.get("dtype"), str):
            found.add(self.raw_inputs["dtype"])
        return found


def decode_value(value: Any) -> Any:
    if is_array(value):
        return decode_array(value)
    if isinstance(value, dict):
        return dict(value)
    return value


@dataclass
class Corpus:
    cases: list[Case]
    manifest_sha256: str
    modified_files: list[str]

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(directory: Path) -> tuple[dict[str, Any], str]:
    path = directory / MANIFEST_NAME
    try:
        raw = path.read_bytes()
        manifest = json.loads(raw)
        files = manifest["files"]
    except FileNotFoundError:
        raise FixtureError(f"{path}: no manifest; run `embconf regenerate`") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise FixtureError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(files, dict) or not files:
        raise FixtureError(f"{path}: the manifest lists no fixture files")
    return manifest, _sha256(raw)


def load_corpus(directory: Path = FIXTURES_DIR, allow_modified: bool = False) -> Corpus:
    """Every case of every file the manifest lists, checked for integrity and completeness."""
    manifest, manifest_hash = read_manifest(directory)
    cases: list[Case] = []
    modified: list[str] = []
    for name, entry in manifest["files"].items():
        if not name.endswith(".yaml"):
            continue
        path = directory / name
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise FixtureError(f"{path}: listed in {MANIFEST_NAME} but missing") from None
        if _sha256(raw) != entry.get("sha256"):
            if not allow_modified:
                raise FixtureError(
                    f"{path}: modified since `embconf regenerate` (hash differs from {MANIFEST_NAME}); "
                    "restore it, regenerate, or pass --allow-modified-fixtures"
                )
            modified.append(name)
        file_cases = parse_fixture_file(path, raw, validate=name in modified)
        if len(file_cases) < entry.get("cases", 0):
            raise FixtureError(f"{path}: holds {len(file_cases)} cases, the manifest records {entry['cases']}; cases were lost")
        cases += file_cases
    _check_unique(cases)
    total = manifest.get("total_cases", 0)
    if len(cases) < total:
        raise FixtureError(f"loaded {len(cases)} cases but the corpus holds {total}; fixture files are missing")
    return Corpus(cases, manifest_hash, modified)


def parse_fixture_file(path: Path, raw: bytes, validate: bool = False) -> list[Case]:
    """The cases of one file; ``validate`` runs the full schema and semantic checks first."""
    try:
        document = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise FixtureError(f"{path}: not valid YAML: {exc}") from None
    if validate:
        problems = validate_document(document, raw.decode("utf-8", "replace"))
        if problems:
            raise FixtureError(f"{path}: " + problems[0] + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""))
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise FixtureError(f"{path}: not a fixture file (no 'cases' list)")
    if document.get("spec_version") != spec_version():
        raise FixtureError(f"{path}: written for spec {document.get('spec_version')}, this suite implements {spec_version()}")
    try:
        return [
            Case(c["id"], c["description"], tuple(c["requirements"]), tuple(c["features"]), c["operation"],
                 c["inputs"], c["expected"], c.get("tolerance", {}), path.name)
            for c in document["cases"]
        ]
    except (KeyError, TypeError) as exc:
        raise FixtureError(f"{path}: malformed case ({exc}); run `embconf validate`") from None


def _check_unique(cases: Iterable[Case]) -> None:
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            raise FixtureError(f"duplicate case id {case.id} in {seen[case.id]} and {case.source}")
        seen[case.id] = case.source


def line_of(text: str, case_id: str) -> int:
    """The line where a case starts, for error messages (0 when not found)."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("- id:") and case_id in line:
            return number
    return 0


def validate_document(document: Any, text: str) -> list[str]:
    """Schema and semantic problems of a parsed fixture file, each with line and case id."""
    from .schemas import validator

    problems: list[str] = []
    for error in validator("fixture").iter_errors(document):
        where = _case_at(document, list(error.absolute_path))
        problems.append(f"{where(text)}{error.message[:200]} at /{'/'.join(map(str, error.absolute_path))}")
    if problems or not isinstance(document, dict):
        return problems or ["not a mapping"]
    if document["spec_version"] != spec_version():
        problems.append(f"spec_version {document['spec_version']} != {spec_version()}")
    seen: set[str] = set()
    for case in document["cases"]:
        prefix = f"line {line_of(text, case['id'])}, case {case['id']}: "
        if case["id"] in seen:
            problems.append(prefix + "duplicate case id")
        seen.add(case["id"])
        problems += [prefix + p for p in _semantic_problems(case)]
    return problems


def _case_at(document: Any, path: list[Any]):
    def describe(text: str) -> str:
        if len(path) >= 2 and path[0] == "cases" and isinstance(path[1], int):
            try:
                case_id = document["cases"][path[1]]["id"]
            except (KeyError, IndexError, TypeError):
                return f"case #{path[1]}: "
            return f"line {line_of(text, str(case_id))}, case {case_id}: "
        return ""

    return describe


def _semantic_problems(case: Mapping[str, Any]) -> list[str]:
    from .spec import error_kinds, features, input_names, optional_inputs

    spec_op = operations()[case["operation"]]
    problems = [f"unknown input {name!r} for {case['operation']}" for name in case["inputs"] if name not in input_names(case["operation"])]
    problems += [f"input {name!r} needs feature {feature!r}" for name, feature in optional_inputs(case["operation"]).items()
                 if name in case["inputs"] and feature not in case["features"]]
    problems += [f"unknown feature {f!r}" for f in case["features"] if f not in features()]
    outputs = case["expected"].get("outputs")
    if outputs is not None:
        if set(outputs) != set(spec_op["outputs"]):
            problems.append(f"outputs {sorted(outputs)} != the spec's {sorted(spec_op['outputs'])}")
        missing_tol = set(outputs) - set(case.get("tolerance", {}))
        problems += [f"output {name!r} has no tolerance" for name in sorted(missing_tol)]
    elif case["expected"].get("error") not in error_kinds():
        problems.append(f"unknown error kind {case['expected'].get('error')!r}")
    for where, values in (("input", case["inputs"]), ("output", outputs or {})):
        for name, value in values.items():
            if is_array(value):
                try:
                    decode_array(value)
                except EncodingError as exc:
                    problems.append(f"{where} {name!r}: {exc}")
    return problems

