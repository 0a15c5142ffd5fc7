"""``embconf matrix --merge``: one matrix from column files measured in several environments.

Each environment (a venv, a container, a CI job) measures its own columns into a matrix JSON (``embconf
matrix --impl ... --json column.json``) or a finished run's report (``embconf run --report-json``, one
column); the merge lays every column of every file side by side, each keeping the environment it was
measured in (Python, NumPy, platform; the framework's version is the column's own). The files must hold
the same matrix format, spec version and fixtures (by manifest hash), and no implementation twice; a run
report must be of a run that finished: anything else is refused in one line (exit 2), naming the file."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any, Optional, Sequence

from embconf.matrix.model import cell_of, matrix_document
from embconf.model.errors import UserError
from embconf.model.vocabulary import requirement_order, spec_version
from embconf.untrusted.read import InputError, load_json, read_bounded, read_head

MAX_COLUMN_FILE = 64 * 2**20  # bytes; the published 13-column matrix is about 1 MB
REPORT_HEAD = re.compile(rb'\s*\{\s*"record"\s*:\s*"header"')  # how a report of JSON lines starts


def load_column_file(path: Path) -> dict[str, Any]:
    """A matrix JSON read as untrusted input and checked against its schema, or a run report (``embconf run
    --report-json``, read a line at a time) as the matrix of its one column; UserError (one line) otherwise."""
    from embconf.model.schemas import validator

    if _is_report(path):
        return _run_report_column(path)
    try:
        raw = read_bounded(path, MAX_COLUMN_FILE, "matrix file")
    except FileNotFoundError:
        raise UserError(f"--merge: {path}: no such file") from None
    except InputError as exc:
        raise UserError(f"--merge: {exc}") from None
    try:
        document = load_json(raw, str(path))
    except InputError as exc:
        raise UserError(f"--merge: {exc}") from None
    if isinstance(document, dict) and "cases" in document:
        return _run_report_column(path)  # a report of format 1
    error = next(iter(validator("matrix").iter_errors(document)), None)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path)
        raise UserError(
            f"--merge: {path} is not a matrix JSON (embconf matrix --json): {error.message[:200]} at /{where}"
        )
    return document


def _is_report(path: Path) -> bool:
    """Whether ``path`` starts as a report of JSON lines does (a regular file whose first bytes open a header)."""
    try:
        head = read_head(path, 4096)
    except (OSError, InputError):
        return False  # said when it is read as a matrix file
    return REPORT_HEAD.match(head) is not None


def _run_report_column(path: Path) -> dict[str, Any]:
    """The one-column matrix of a finished run's report."""
    from embconf.matrix.model import build
    from embconf.reports.json_report import read_record

    try:
        record = read_record(path)
    except ValueError as exc:
        raise UserError(f"--merge: {exc}" if str(path) in str(exc) else f"--merge: {path}: {exc}") from None
    if not record.complete:
        raise UserError(f"--merge: {path} is the report of a run that did not finish ({len(record.results)} cases)")
    if "manifest_sha256" not in record.fixtures:
        raise UserError(f"--merge: {path} does not say which fixtures it ran on")
    return build([record], dict(record.fixtures))


def merge(
    files: Sequence[tuple[str, dict[str, Any]]], command: str = "", generated: Optional[datetime] = None
) -> dict[str, Any]:
    """One matrix document of the named documents' columns, in order; UserError when they cannot be merged."""
    first_name, first = files[0]
    columns: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for name, document in files:
        _check_compatible(name, document, first_name, first)
        for column in document["implementations"]:
            if column["impl"] in seen:
                raise UserError(
                    f"--merge: {column['impl']!r} is in both {seen[column['impl']]} and {name}; "
                    "a column is one implementation measured in one environment"
                )
            seen[column["impl"]] = name
            columns.append({**column, "environment": column.get("environment", document["environment"])})
    fixtures = {**first["fixtures"], "cases": max(document["fixtures"]["cases"] for _, document in files)}
    sections = _sections([document for _, document in files], [column["impl"] for column in columns])
    return matrix_document(columns, sections, fixtures, command, generated, sources=[name for name, _ in files])


def _check_compatible(name: str, document: dict[str, Any], first_name: str, first: dict[str, Any]) -> None:
    if document["spec_version"] != spec_version():
        raise UserError(
            f"--merge: {name} was measured against spec {document['spec_version']}; this embconf implements {spec_version()}"
        )
    ours, theirs = first["fixtures"]["manifest_sha256"], document["fixtures"]["manifest_sha256"]
    if ours != theirs:
        raise UserError(
            f"--merge: {name} was measured on other fixtures (manifest {theirs[:16]}) than {first_name} ({ours[:16]})"
        )


def _sections(documents: Sequence[dict[str, Any]], impls: list[str]) -> list[dict[str, Any]]:
    """Every section and requirement of any document, in the spec's order; a column without a requirement
    (its file selected no case of it) has an empty n/a cell there."""
    titles: dict[int, str] = {}
    cells: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    subjects: dict[str, str] = {}
    for document in documents:
        for section in document["sections"]:
            titles[section["number"]] = section["title"]
            for requirement in section["requirements"]:
                subjects[requirement["id"]] = requirement["subject"]
                row = cells[section["number"]].setdefault(requirement["id"], {})
                row.update(requirement["cells"])
    return [
        {
            "number": number,
            "title": titles[number],
            "requirements": [
                {"id": req, "subject": subjects[req], "cells": {impl: row.get(impl) or cell_of([]) for impl in impls}}
                for req, row in sorted(cells[number].items(), key=lambda kv: requirement_order(kv[0]))
            ],
        }
        for number in sorted(titles)
    ]
