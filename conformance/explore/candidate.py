"""The failures ``embconf explore`` shrank, as one fixture file in the fixtures' schema (``spec/schemas/
fixture.schema.json``): a candidate golden that ``embconf run --fixtures FILE`` loads (checked in full, as no
manifest vouches for it) and that fails the implementation it was found on. It is written as a regular file
only (never through a link, nor into a FIFO)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from embconf.corpus.fixtures import Case
from embconf.model.errors import UserError
from embconf.model.vocabulary import operation_area, spec_version
from embconf.reference.emit import dump_yaml
from embconf.reference.generate import FORMAT_VERSION, write_regular

HEADER = (
    "Candidate golden cases for the embedding-conformance spec {spec} (format {fmt}), found by `embconf explore`\n"
    "on {impl} (seed {seed}). Not part of the suite's goldens: run them with `embconf run --fixtures FILE`;\n"
    "to freeze one, write it as a case of reference/cases/ and run `embconf regenerate`."
)


def record_of(case: Case) -> dict[str, Any]:
    """The fixture record of a case of one call, as the fixture files hold it."""
    record: dict[str, Any] = {
        "id": case.id,
        "description": case.description,
        "requirements": list(case.requirements),
        "features": list(case.features),
        "operation": case.operation,
        "inputs": dict(case.raw_inputs),
        "expected": dict(case.raw_expected),
    }
    if case.tolerance:
        record["tolerance"] = dict(case.tolerance)
    return record


def document_text(cases: Sequence[Case], impl: str, seed: int) -> str:
    """The fixture file of ``cases`` (its area: the first case's)."""
    document = {
        "format_version": FORMAT_VERSION,
        "spec_version": spec_version(),
        "area": operation_area(cases[0].operation),
        "cases": [record_of(case) for case in cases],
    }
    return dump_yaml(document, HEADER.format(spec=spec_version(), fmt=FORMAT_VERSION, impl=impl, seed=seed))


def write_candidates(path: Path, cases: Sequence[Case], impl: str, seed: int) -> None:
    """``cases`` written to ``path`` as one fixture file; UserError (one line) when it cannot be written."""
    try:
        write_regular(path, document_text(cases, impl, seed))
    except OSError as exc:
        raise UserError(f"cannot write the candidate cases: {exc.filename or path}: {exc.strerror or exc}") from None
