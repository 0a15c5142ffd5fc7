"""Loading the golden fixtures: safe YAML, integrity against the manifest, lazy array decoding.

A run trusts a fixture file only when its SHA-256 matches ``MANIFEST.json`` (written
by ``embconf regenerate``); a modified file is refused unless explicitly allowed, and
is then validated against the fixture schema before use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Optional

import numpy as np

from embconf.corpus.shipped import differs_from_shipped, shipped_json_form
from embconf.model.encoding import decode_value, is_array
from embconf.model.errors import UserError
from embconf.model.vocabulary import FIXTURES_DIR, operations, spec_version
from embconf.untrusted.read import InputError, load_json, load_yaml, read_bounded
from embconf.untrusted.text import one_line

MANIFEST_NAME = "MANIFEST.json"


class FixtureError(UserError):
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
    calls: tuple[Case, ...] = field(default=(), repr=False)  # a case of calls on one instance (section 9.7)
    before: tuple[Case, ...] = field(default=(), repr=False)  # a call of such a case: the calls made before it
    of_calls: int = 0  # a call of such a case: how many calls the case makes

    @property
    def label(self) -> str:
        """The case's id, and for a call of a case of calls its number among them (what a failure names)."""
        if not self.of_calls:
            return self.id
        return f"{self.id}, call {len(self.before) + 1} of {self.of_calls} on one instance"

    @property
    def is_sequence(self) -> bool:
        """Whether the case is a sequence of calls on one instance; its own inputs and golden are then its first
        call's, and :attr:`calls` holds every call, each a case of one call with the sequence's id."""
        return bool(self.calls)

    @property
    def operations(self) -> tuple[str, ...]:
        """The operations its calls make, each once, in order (its own for a case of one call)."""
        return tuple(dict.fromkeys(call.operation for call in self.calls)) if self.calls else (self.operation,)

    def call_numbered(self, number: int) -> Case:
        """A sequence's call ``number`` (from 1; 0: its last), the one a result names; a case of one call itself."""
        if not self.calls:
            return self
        return self.calls[number - 1] if 0 < number <= len(self.calls) else self.calls[-1]

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], source: str, tolerance: Optional[Mapping[str, Any]] = None
    ) -> "Case":
        """The case a fixture record (a dict as the YAML holds it) describes; ``tolerance`` in place of its own."""
        return cls(
            record["id"],
            record["description"],
            tuple(record["requirements"]),
            tuple(record["features"]),
            record["operation"],
            record["inputs"],
            record["expected"],
            record.get("tolerance", {}) if tolerance is None else tolerance,
            source,
        )

    @property
    def expected_error(self) -> Optional[str]:
        return self.raw_expected.get("error")

    def inputs(self) -> dict[str, Any]:
        """Fresh decoded inputs (new arrays on every call, so nothing an implementation does leaks back)."""
        return {
            name: value.copy() if isinstance(value, (np.ndarray, dict)) else value
            for name, value in self._decoded_inputs.items()
        }

    @cached_property
    def _decoded_inputs(self) -> dict[str, Any]:
        """The inputs decoded once (a run, its repeats and diagnosis's replays call :meth:`inputs` many times)."""
        return {name: decode_value(value) for name, value in self.raw_inputs.items()}

    @cached_property
    def expected_outputs(self) -> dict[str, Any]:
        return {name: decode_value(value) for name, value in self.raw_expected.get("outputs", {}).items()}

    @cached_property
    def pinned_rows(self) -> dict[str, tuple[int, ...]]:
        """The rows of each output its golden pins (outputs judged whole are not named)."""
        outputs = self.raw_expected.get("outputs", {})
        return {name: tuple(raw["rows"]) for name, raw in outputs.items() if isinstance(raw, dict) and "rows" in raw}

    @property
    def dtypes(self) -> set[str]:
        """The float dtypes the case exercises (for capability matching)."""
        found = {v["dtype"] for v in self.raw_inputs.values() if is_array(v) and v["dtype"].startswith("float")}
        if isinstance(self.raw_inputs.get("dtype"), str):
            found.add(self.raw_inputs["dtype"])
        return found


@dataclass
class Corpus:
    cases: list[Case]
    manifest_sha256: str
    modified_files: list[str]
    unshipped_files: list[str] = field(default_factory=list)  # not as this suite shipped them (corpus.shipped)

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}

    def report_block(self, cases: int) -> dict[str, Any]:
        """The ``fixtures`` block of every report of a run of ``cases`` of this corpus (``run``, ``matrix``, the
        pytest plugin): the manifest's hash, the files edited by hand, those not as this suite shipped them."""
        return {
            "manifest_sha256": self.manifest_sha256,
            "modified": list(self.modified_files),
            "differs_from_shipped": list(self.unshipped_files),
            "cases": cases,
        }


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


MAX_FIXTURE_BYTES = 16 << 20  # per fixture file; the largest committed one is under 1 MiB
MAX_MANIFEST_BYTES = 1 << 20
MAX_NDIM = 32  # dimensions of an array in a fixture; the committed ones have at most 4


def read_manifest(directory: Path) -> tuple[dict[str, Any], str]:
    """The manifest of ``directory`` and its hash, checked for shape: FixtureError (one line) otherwise."""
    path = directory / MANIFEST_NAME
    if not directory.is_dir():
        raise FixtureError(
            f"{directory}: not a fixture directory"
            + (" (it is a file)" if directory.exists() else " (it does not exist)")
        )
    try:
        raw = read_bounded(path, MAX_MANIFEST_BYTES, "manifest")
        manifest = load_json(raw, str(path))
    except FileNotFoundError:
        raise FixtureError(f"{path}: no manifest; run `embconf regenerate`") from None
    except InputError as exc:
        raise FixtureError(str(exc)) from None
    problem = _manifest_problem(manifest)
    if problem:
        raise FixtureError(f"{path}: unreadable manifest ({problem}); run `embconf regenerate`")
    return manifest, _sha256(raw)


def _count_problem(value: Any) -> bool:
    return isinstance(value, bool) or not isinstance(value, int) or value < 0


def _manifest_problem(manifest: Any) -> Optional[str]:
    """What is wrong with the manifest's structure, or None."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return "no 'files' object listing the fixture files"
    if "total_cases" in manifest and _count_problem(manifest["total_cases"]):
        return f"'total_cases' is not a count: {one_line(repr(manifest['total_cases']), 60)}"
    for name, entry in files.items():
        if not name or "/" in name or "\\" in name or name.startswith("."):
            return f"file name {one_line(repr(name), 80)} is not a plain file name"
        if not isinstance(entry, dict):
            return f"the entry of {one_line(name, 80)} is not an object"
        if not isinstance(entry.get("sha256"), str):
            return f"the entry of {one_line(name, 80)} has no 'sha256' string"
        if _count_problem(entry.get("cases", 0)):
            return (
                f"the entry of {one_line(name, 80)} has 'cases' {one_line(repr(entry.get('cases')), 60)}, not a count"
            )
    return None


def read_fixture_bytes(path: Path) -> bytes:
    """The bytes of a listed fixture file: regular and at most MAX_FIXTURE_BYTES (FixtureError otherwise)."""
    try:
        return read_bounded(path, MAX_FIXTURE_BYTES, "fixture file")
    except FileNotFoundError:
        raise FixtureError(f"{path}: listed in {MANIFEST_NAME} but missing") from None
    except InputError as exc:
        raise FixtureError(str(exc)) from None


def load_corpus(directory: Path = FIXTURES_DIR, allow_modified: bool = False) -> Corpus:
    """Every case of every file the manifest lists, checked for integrity and completeness; for a fixture file
    named alone, :func:`load_file_corpus`."""
    if directory.is_file():
        return load_file_corpus(directory)
    manifest, manifest_hash = read_manifest(directory)
    cases: list[Case] = []
    modified: list[str] = []
    hashes: dict[str, str] = {}
    for name, entry in manifest["files"].items():
        if not name.endswith(".yaml"):
            continue
        path = directory / name
        raw = read_fixture_bytes(path)
        hashes[name] = _sha256(raw)
        if hashes[name] != entry.get("sha256"):
            if not allow_modified:
                raise FixtureError(
                    f"{path}: modified since `embconf regenerate` (hash differs from {MANIFEST_NAME}); "
                    "restore it, regenerate, or pass --allow-modified-fixtures"
                )
            modified.append(name)
        form = None if name in modified else shipped_json_form(directory, name, hashes[name], MAX_FIXTURE_BYTES)
        file_cases = parse_fixture_file(path, raw, validate=name in modified, document=form)
        if len(file_cases) < entry.get("cases", 0):
            raise FixtureError(
                f"{path}: holds {len(file_cases)} cases, the manifest records {entry['cases']}; cases were lost"
            )
        cases += file_cases
    _check_unique(cases)
    total = manifest.get("total_cases", 0)
    if len(cases) < total:
        raise FixtureError(f"loaded {len(cases)} cases but the corpus holds {total}; fixture files are missing")
    return Corpus(cases, manifest_hash, modified, differs_from_shipped(hashes))


def load_file_corpus(path: Path) -> Corpus:
    """The cases of one fixture file named alone (a candidate ``embconf explore --write-cases`` wrote): no
    manifest vouches for it, so the schema and the semantics are checked in full; a local corpus (the report
    names the file)."""
    raw = read_fixture_bytes(path)
    try:
        cases = parse_fixture_file(path, raw, validate=True)
    except FixtureError as exc:
        raise FixtureError(f"not a fixture directory (it is a file) nor a fixture file: {exc}") from None
    _check_unique(cases)
    return Corpus(cases, _sha256(raw), [], [path.name])


def parse_yaml(path: Path, raw: bytes) -> Any:
    """The YAML document of a fixture file (no aliases, bounded nesting: :func:`load_yaml`)."""
    try:
        return load_yaml(raw, str(path))
    except InputError as exc:
        raise FixtureError(str(exc)) from None


def parse_fixture_file(path: Path, raw: bytes, validate: bool = False, document: Any = None) -> list[Case]:
    """The cases of one file; ``validate`` runs the full schema and semantic checks first. ``document``: the
    file's document read already from its JSON form, which is byte for byte the one this suite shipped (so its
    cases' structure is not checked again), else it is read from ``raw`` and each case's structure is checked."""
    shipped = document is not None
    if document is None:
        document = parse_yaml(path, raw)
    if validate:
        from embconf.corpus.semantics import validate_document

        problems = validate_document(document, raw.decode("utf-8", "replace"))
        if problems:
            raise FixtureError(
                f"{path}: "
                + one_line(problems[0])
                + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else "")
            )
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise FixtureError(f"{path}: not a fixture file (no 'cases' list)")
    if document.get("spec_version") != spec_version():
        raise FixtureError(
            f"{path}: written for spec {one_line(repr(document.get('spec_version')), 40)}, this suite implements {spec_version()}"
        )
    for number, case in enumerate(() if shipped else document["cases"], 1):
        problem = _case_problem(case)
        if problem:
            raise FixtureError(f"{path}: malformed case #{number} ({problem}); run `embconf validate`")
    return [case_of(record, path.name) for record in document["cases"]]


def call_records(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A case record as the records of its calls: itself for a case of one call; for a sequence (``calls``, section
    9.7) each call's ``operation``, ``inputs``, ``expected`` and ``tolerance`` under the sequence's other fields."""
    shared = {key: value for key, value in record.items() if key != "calls"}
    calls = record.get("calls")
    if not isinstance(calls, list):
        return [shared]
    return [{**shared, **call} if isinstance(call, dict) else call for call in calls]


def case_of(record: Mapping[str, Any], source: str) -> Case:
    """The :class:`Case` of a record checked by :func:`_case_problem` (a sequence: its first call's, holding all)."""
    if record.get("calls"):
        calls: list[Case] = []
        records = call_records(record)
        for call in records:
            calls.append(replace(case_of(call, source), before=tuple(calls), of_calls=len(records)))
        return replace(calls[0], calls=tuple(calls))
    return Case.from_record(record, source)


_CASE_FIELDS = {
    "id": str,
    "description": str,
    "operation": str,
    "requirements": list,
    "features": list,
    "inputs": dict,
    "expected": dict,
    "tolerance": dict,
}


def _case_problem(case: Any) -> Optional[str]:
    """Why ``case`` cannot become a :class:`Case` (a cheap structural check, also of trusted files), or None."""
    if not isinstance(case, dict):
        return f"a {type(case).__name__}, not a mapping"
    if "calls" in case:
        if not isinstance(case["calls"], list) or len(case["calls"]) < 2:
            return "'calls' is not a list of two or more calls"
        for number, call in enumerate(call_records(case), 1):
            problem = _call_problem(call)
            if problem:
                return f"call {number}: {problem}"
        return None
    return _call_problem(case)


def _call_problem(case: Any) -> Optional[str]:
    """Why the record of one call cannot become a :class:`Case`, or None."""
    if not isinstance(case, dict):
        return f"a {type(case).__name__}, not a mapping"
    for key, kind in _CASE_FIELDS.items():
        if key == "tolerance" and key not in case:
            continue
        if not isinstance(case.get(key), kind):
            return f"'{key}' is not a {kind.__name__}"
    if not all(isinstance(v, str) for v in case["requirements"] + case["features"]):
        return "'requirements' and 'features' must be lists of strings"
    if case["operation"] not in operations():
        return f"unknown operation {one_line(repr(case['operation']), 60)}"
    outputs = case["expected"].get("outputs", {})
    if not isinstance(outputs, dict):
        return "'expected.outputs' is not a mapping"
    for name, value in [*case["inputs"].items(), *outputs.items()]:
        problem = array_problem(value)
        if problem:
            return f"{one_line(str(name), 60)}: {problem}"
    return None


def array_problem(value: Any) -> Optional[str]:
    """Why an encoded array's shape is unusable (not a list of counts, more than MAX_NDIM dimensions), or None."""
    if not is_array(value):
        return None
    shape = value["shape"]
    if not isinstance(value["dtype"], str):
        return "its dtype is not a string"
    if not isinstance(shape, list) or any(_count_problem(n) for n in shape):
        return "its shape is not a list of counts"
    if len(shape) > MAX_NDIM:
        return f"its shape has {len(shape)} dimensions, more than {MAX_NDIM}"
    return None


def _check_unique(cases: Iterable[Case]) -> None:
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            raise FixtureError(f"duplicate case id {case.id} in {seen[case.id]} and {case.source}")
        seen[case.id] = case.source
