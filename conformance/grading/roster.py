"""Who handed in what: a roster (``embconf grade --roster FILE``) mapping submission names to students, and
``grades.csv``, one row per student, for the gradebooks of Canvas and Gradescope (*Import grades*).

Two roster forms are read:

- a CSV with a header: a ``submission`` (or ``name``) column holding the submission's name as the gradebook
  names it (its file or folder name without extension), and any of ``sid`` (or ``student_id``, ``id``),
  ``email`` and ``student`` (or ``full_name``);
- Gradescope's submission metadata (``submission_metadata.yml`` of an export, or the same as JSON): a mapping
  from each submission folder to its ``:submitters``, each with ``:name``, ``:sid`` and ``:email``. A group
  submission gives every member a row.

A student on the roster without a submission gets a row with no score and the reason, never none.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from embconf.grading.files import csv_cell
from embconf.grading.score import Score
from embconf.model.errors import UserError
from embconf.untrusted.read import InputError, load_json, read_bounded

MAX_ROSTER_BYTES = 16 * 2**20
COLUMNS = {
    "submission": ("submission", "name"),
    "sid": ("sid", "student_id", "id"),
    "email": ("email",),
    "student": ("student", "full_name"),
}
HEADER = ("student", "sid", "email", "submission", "score", "max", "reason")


class RosterError(UserError):
    """A roster that cannot be used: one line naming the file."""


@dataclass(frozen=True)
class Student:
    student: str = ""
    sid: str = ""
    email: str = ""


Roster = dict[str, list[Student]]  # submission name -> its students (a group has several)


def load_roster(path: Path) -> Roster:
    """The roster at ``path`` (CSV, or Gradescope's metadata as YAML or JSON); RosterError otherwise."""
    try:
        text = read_bounded(path, MAX_ROSTER_BYTES, "roster").decode("utf-8-sig")
    except FileNotFoundError:
        raise RosterError(f"--roster {path}: no such file") from None
    except (InputError, UnicodeDecodeError) as exc:
        raise RosterError(f"--roster {path}: {str(exc).removeprefix(f'{path}: ')}") from None
    if path.suffix.lower() == ".csv":
        roster = _from_csv(text, path)
    else:
        try:  # YAML with aliases (Ruby's dump shares repeated objects so), parsed within the recursion limit
            data = load_json(text.encode(), str(path)) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (InputError, yaml.YAMLError, RecursionError):
            raise RosterError(f"--roster {path}: neither a CSV nor valid submission metadata (YAML or JSON)") from None
        roster = _from_metadata(data, path)
    if not roster:
        raise RosterError(f"--roster {path}: no students in it")
    return roster


def _from_csv(text: str, path: Path) -> Roster:
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise RosterError(f"--roster {path}: row 1: {_csv_problem(exc)}") from None
    fields = {name.strip().lower().replace(" ", "_"): name for name in header or ()}
    found = {key: next((fields[n] for n in names if n in fields), None) for key, names in COLUMNS.items()}
    submission = found["submission"]
    if submission is None:
        raise RosterError(f"--roster {path}: no 'submission' (or 'name') column in its header")
    roster: Roster = {}
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise RosterError(f"--roster {path}: row {reader.line_num + 1}: {_csv_problem(exc)}") from None
    for row in rows:
        name = (row.get(submission) or "").strip()
        if name:
            values = {key: (row.get(column) or "").strip() if column else "" for key, column in found.items()}
            roster.setdefault(name, []).append(Student(values["student"], values["sid"], values["email"]))
    return roster


def _csv_problem(exc: csv.Error) -> str:
    return f"not valid CSV ({str(exc).split(' - ')[0]}: a stray carriage return or an unclosed quote?)"


def _from_metadata(data: Any, path: Path) -> Roster:
    if not isinstance(data, Mapping):
        raise RosterError(f"--roster {path}: expected a mapping of submission folders to their submitters")
    roster: Roster = {}
    for folder, meta in data.items():
        people = _get(meta, "submitters") if isinstance(meta, Mapping) else None
        if not isinstance(people, list):
            raise RosterError(f"--roster {path}: submission {str(folder)[:100]!r} has no list of submitters")
        roster[str(folder)] = [
            Student(str(_get(p, "name") or ""), str(_get(p, "sid") or ""), str(_get(p, "email") or ""))
            for p in people
            if isinstance(p, Mapping)
        ]
    return roster


def _get(mapping: Mapping[str, Any], key: str) -> Any:
    return mapping.get(f":{key}", mapping.get(key))


def students_of(record: Mapping[str, Any], roster: Roster) -> list[Student]:
    """The roster's students of a graded record, by its name or its entry's name."""
    return roster.get(record["name"]) or roster.get(str(record.get("entry", ""))) or []


def grades_csv(scores: Sequence[Score], roster: Roster) -> str:
    """One row per student (a group's members each), then the roster's students without a submission."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    matched: set[str] = set()
    for result in scores:
        record = result.record
        for student in students_of(record, roster):
            row = [student.student, student.sid, student.email, record["name"]]
            writer.writerow(
                [*map(csv_cell, row), f"{result.total:g}", f"{result.max:g}", csv_cell(record.get("reason", ""))]
            )
        matched.update(name for name in (record["name"], str(record.get("entry", ""))) if name in roster)
    for name in sorted(set(roster) - matched):
        for student in roster[name]:
            writer.writerow(
                [*map(csv_cell, [student.student, student.sid, student.email, name]), "", "", "no submission"]
            )
    return buffer.getvalue()
