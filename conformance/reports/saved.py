"""A saved report read back (``embconf report``, ``embconf matrix --merge``) as untrusted input: bounded and typed.

- Bounded: a regular file of at most :data:`MAX_REPORT` bytes (a directory, a device, a FIFO or a larger file is
  refused before a byte is read), streamed a line at a time (each line at most :data:`MAX_LINE` bytes, its nesting
  bounded), each case's line made its result as it is read (a later line for the same case replaces it), and at
  most :data:`MAX_CASES` cases. A report of format 1 (one JSON document) is read whole: at most
  :data:`MAX_DOCUMENT` bytes.
- Typed: every field of every line is checked against the type the record holds (:mod:`.entries`) before the
  record is built; anything else is one line, ``FILE, line N: field 'F' must be ...``.

Every error is a :class:`ValueError` of one line naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from embconf.model.outcomes import PROBLEMS, CaseResult
from embconf.model.record import RunRecord
from embconf.reports.entries import check_case, check_footer, check_header
from embconf.reports.json_report import CASE, FOOTER, HEADER
from embconf.untrusted.read import InputError, LineOverLimit, bounded_lines, load_json, read_bounded

MAX_REPORT = 64 * 2**20  # bytes of a report file (the whole corpus's report is about 150 kB)
MAX_LINE = 4 * 2**20  # bytes of one line (a case's line holds a few texts of at most 8192 characters)
MAX_DOCUMENT = 16 * 2**20  # bytes of a report of format 1 (one JSON document, read whole)
MAX_CASES = 100_000  # distinct cases of one report (the corpus has 615)

Numbered = Iterator[tuple[int, bytes]]


def read(path: Union[str, Path]) -> dict[str, Any]:
    """The report document (the schema's one object) of a report file, JSON lines or format 1; a run that did not
    finish is ``"complete": false`` with a verdict saying where it stopped (a last line cut short is dropped)."""
    return _read(path, _document)


def read_record(path: Union[str, Path]) -> RunRecord:
    """The run record a report file holds (each case's line made its result as it is read)."""
    return _read(path, _record)


def parse(raw: bytes, name: str = "report") -> dict[str, Any]:
    """The report document of a report's bytes (as :func:`read`; a report written to stdout)."""
    lines = ((number, line) for number, line in enumerate(raw.splitlines(keepends=True), 1))
    return _from_lines(lines, name, lambda: raw, _document)


def _read(path: Union[str, Path], build: Callable[..., Any]) -> Any:
    name = str(path)
    try:
        return _from_lines(bounded_lines(Path(path), MAX_REPORT, MAX_LINE, "report"), name, lambda: _whole(path), build)
    except FileNotFoundError:
        raise ValueError(f"{name}: no such file") from None
    except InputError as exc:
        raise ValueError(str(exc)) from None


def _whole(path: Union[str, Path]) -> bytes:
    return read_bounded(Path(path), MAX_DOCUMENT, "report (one JSON document, not JSON lines)")


def _from_lines(lines: Numbered, name: str, whole: Callable[[], bytes], build: Callable[..., Any]) -> Any:
    """The report of JSON lines, or of format 1 (``whole()``, its bytes) when the first line is not a header."""
    entries = _entries(lines, name)
    first, too_long = None, None
    try:
        first = next(entries, None)
    except LineOverLimit as exc:  # one document (format 1) on one line, or no report
        too_long = exc
    except ValueError:  # not JSON: one document written on several lines (format 1), or no report
        pass
    if first is not None and isinstance(first[1], dict) and first[1].get("record") == HEADER:
        return build(name, _checked(first, check_header, name), entries)
    return build(name, None, None, _format_1(whole(), name, too_long))


def _format_1(raw: bytes, name: str, too_long: Optional[LineOverLimit] = None) -> dict[str, Any]:
    try:
        document = load_json(raw, name)
    except InputError as exc:
        if too_long is not None:
            raise ValueError(str(too_long)) from None
        raise ValueError(f"{name} is not an embconf run report: {str(exc).removeprefix(name + ': ')}") from None
    if not isinstance(document, dict) or "cases" not in document:
        raise ValueError(f"{name} is not an embconf run report: it does not start with a report header")
    cases = document["cases"]
    if not isinstance(cases, list) or len(cases) > MAX_CASES:
        raise ValueError(f"{name}: field 'cases' must be a list of at most {MAX_CASES} cases")
    _checked((0, document), check_header, name)
    _checked((0, document), check_footer, name)
    for case in cases:
        _checked((0, case), check_case, name)
    return document


def _entries(lines: Numbered, name: str) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) of each line that is not blank; a line that is not JSON ends the report when it is
    the last (a run killed while writing it), else ValueError naming it."""
    pending: Optional[tuple[int, InputError]] = None
    for number, line in lines:
        if not line.strip():
            continue
        if pending is not None:
            raise ValueError(f"{name}, line {pending[0]}: {str(pending[1]).removeprefix(name + ': ')}")
        try:
            yield number, load_json(line, name)
        except InputError as exc:
            if number == 1:
                raise ValueError(str(exc)) from None
            pending = (number, exc)


def _checked(numbered: tuple[int, Any], check: Callable[[Any], dict[str, Any]], name: str) -> dict[str, Any]:
    number, entry = numbered
    try:
        return check(entry)
    except InputError as exc:
        raise ValueError(f"{name}{f', line {number}' if number else ''}: {exc}") from None


def _lines_of(
    entries: Iterable[tuple[int, Any]], name: str, convert: Callable[[dict[str, Any]], Any]
) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    """({case id: converted case}, the footer or None) of the lines after the header."""
    cases: dict[str, Any] = {}
    footer: Optional[dict[str, Any]] = None
    for number, entry in entries:
        kind = entry.get("record") if isinstance(entry, dict) else None
        if kind == CASE:
            case = _checked((number, entry), check_case, name)
            if case["id"] not in cases and len(cases) >= MAX_CASES:
                raise ValueError(f"{name}, line {number}: more than {MAX_CASES} cases; refused")
            cases[case["id"]] = convert(case)
        elif kind == FOOTER:
            footer = _checked((number, entry), check_footer, name)
        else:
            raise ValueError(f"{name}, line {number}: a line that is not a report's header, case or footer")
    return cases, footer


def _record(
    name: str, header: Optional[dict[str, Any]], entries: Any, document: Optional[dict[str, Any]] = None
) -> RunRecord:
    if document is not None:
        return _from_json(document, name)
    assert header is not None
    cases, footer = _lines_of(entries, name, CaseResult.from_json)
    results = list(cases.values())
    return _from_json({**header, **(footer or _unfinished(header, results, name)), "cases": []}, name, results)


def _document(
    name: str, header: Optional[dict[str, Any]], entries: Any, document: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    if document is not None:
        _from_json(document, name)
        return document
    assert header is not None
    cases, footer = _lines_of(entries, name, lambda case: case)
    if footer is None:
        footer = _unfinished(header, [CaseResult.from_json(case) for case in cases.values()], name)
    return {**header, "cases": list(cases.values()), **footer}


def _from_json(document: dict[str, Any], name: str, results: Optional[list[CaseResult]] = None) -> RunRecord:
    try:
        return RunRecord.from_json(document, results)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _unfinished(header: dict[str, Any], results: list[CaseResult], name: str) -> dict[str, Any]:
    """The footer a report without one stands for: the run stopped after the cases it holds."""
    record = _from_json({**header, "complete": False, "cases": []}, name, results)
    ran, planned = len(results), header.get("planned", len(results))
    return {
        "complete": False,
        "summary": record.summary(),
        "declined": len(record.declined),
        "verdict": {
            "summary": f"incomplete: the run stopped after {ran} of {planned} cases (no diagnosis)",
            "explained": 0,
            "failures": sum(result.outcome in PROBLEMS for result in results),
            "mistakes": [],
        },
    }
