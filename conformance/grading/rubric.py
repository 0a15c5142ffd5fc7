"""The rubric: points per group of cases, as data (YAML, schema spec/schemas/rubric.schema.json).

An item chooses cases by requirement ids or globs, spec sections (``"3"`` or ``3``: every requirement
of SPEC.md section 3) and case-id globs (a case is in the item when it matches any of them), narrowed by
``operations`` when given. Its credit is ``partial`` (points times the fraction of counted cases
passed) or ``all_or_nothing``. A case that does not apply because it needs an optional feature counts
as ``not_applicable`` says (``exclude``: left out of the fraction, ``pass``, ``fail``); a case of an
operation the submission does not provide at all counts as ``missing`` says (``fail`` or ``exclude``).
A case the submission declined (``embconf.Decline``, or a peer's ``skipped`` reply) within what the item
grades counts as failed, unless it matches one of the rubric's ``allowed_declines`` (case-id or requirement
globs, at the top or per item): then it is left out like a case outside the features. A case the adapter's own
rule skipped (``decided_by: glue``: an older TinyTorch API without start_pos, say) is no decline of the
submission's: it counts as ``not_applicable`` says. An item may name the optional ``features`` it grades (of
``spec/vocabulary.json``: ``bag-max``, ``bag-padding``, ...): a case not applicable only because the submission does
not claim features the item names (its ``unclaimed`` ones, all named) counts as failed, not attempted, whatever
``not_applicable`` says; so leaving a wrong mode out of what a class declares buys nothing back. An item none of whose
cases counts earns nothing. Settings at the top are defaults for every item. An ``extra_credit`` item (an optional
extension, such as bags) adds what it earns to the total but nothing to the maximum: a submission without the
extension scores as it would without the item.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from embconf.model.errors import UserError
from embconf.model.outcomes import NOT_APPLICABLE, PASS, XPASS
from embconf.model.vocabulary import features as spec_features
from embconf.model.vocabulary import requirement_subjects, section_of
from embconf.untrusted.read import InputError, load_yaml, read_bounded

DEFAULT_RUBRIC = Path(__file__).with_name("default_rubric.yaml")
MAX_RUBRIC_BYTES = 1 << 20  # the default rubric is about 2 kB
SETTINGS = ("credit", "not_applicable", "missing", "visibility")
DEFAULTS = {"credit": "partial", "not_applicable": "exclude", "missing": "fail", "visibility": "visible"}


class RubricError(UserError):
    """A rubric that cannot be used: one line naming the file and the problem."""


def declined_by_submission(case: Mapping[str, Any]) -> bool:
    """Whether a recorded case is the submission's own decline (``embconf.Decline``, a peer's ``skipped``), not a
    skip the adapter's rule made (``decided_by: glue``, an older API it cannot drive there)."""
    return bool(case.get("declined")) and case.get("decided_by") != "glue"


@dataclass(frozen=True)
class Item:
    id: str
    name: str
    points: float
    requirements: tuple[str, ...]
    cases: tuple[str, ...]
    operations: tuple[str, ...]
    credit: str
    not_applicable: str
    missing: str
    visibility: str
    allowed_declines: tuple[str, ...] = ()  # case-id or requirement globs a submission may decline
    extra_credit: bool = False  # its points add to the total, never to the maximum
    features: tuple[str, ...] = ()  # optional features it grades: a case needing one unclaimed is not attempted

    @property
    def label(self) -> str:
        """The item's name as shown beside its points: an extra-credit item says so."""
        return self.name + (" (extra credit)" if self.extra_credit else "")

    def selects(self, case_id: str, requirements: Sequence[str], operation: str) -> bool:
        if self.operations and operation not in self.operations:
            return False
        return any(fnmatch.fnmatchcase(case_id, glob) for glob in self.cases) or any(map(self.names, requirements))

    def names(self, requirement: str) -> bool:
        """Whether one of the item's requirement globs matches ``requirement``."""
        return any(fnmatch.fnmatchcase(requirement, glob) for glob in self.requirements)

    def counts(self, case: Mapping[str, Any]) -> Optional[bool]:
        """Whether a recorded case counts as passed for this item; None when it is left out."""
        outcome = case["outcome"]
        if outcome == NOT_APPLICABLE and declined_by_submission(case):
            return None if self.allows_decline(case) else False
        if outcome == NOT_APPLICABLE and self.unattempted(case):
            return False
        if outcome == NOT_APPLICABLE:
            policy = self.not_applicable if case.get("provided", True) else self.missing
            return None if policy == "exclude" else policy == "pass"
        return outcome in (PASS, XPASS)

    def unattempted(self, case: Mapping[str, Any]) -> tuple[str, ...]:
        """The features the item names that a not-applicable case needs and the submission does not claim, when
        those are all it lacks (a case also needing a feature the item does not name keeps its policy); else ()."""
        unclaimed = tuple(case.get("unclaimed", ()))
        if not self.features or not case.get("provided", True) or declined_by_submission(case):
            return ()
        return unclaimed if unclaimed and set(unclaimed) <= set(self.features) else ()

    def allows_decline(self, case: Mapping[str, Any]) -> bool:
        return any(fnmatch.fnmatchcase(case["id"], glob) for glob in self.allowed_declines) or any(
            fnmatch.fnmatchcase(req, glob) for req in case["requirements"] for glob in self.allowed_declines
        )


@dataclass(frozen=True)
class Rubric:
    title: str
    items: tuple[Item, ...]
    source: str

    @property
    def max_points(self) -> float:
        return sum(item.points for item in self.items if not item.extra_credit)

    def case_ids(self, cases: Iterable[Any]) -> list[str]:
        """The ids of the cases some item grades (only these need to run)."""
        return [c.id for c in cases if any(item.selects(c.id, c.requirements, c.operation) for item in self.items)]


def rubric_text(path: Path) -> str:
    """The text of the rubric file at ``path``, read as untrusted input (a regular UTF-8 file of at most
    MAX_RUBRIC_BYTES: a FIFO is never waited on, a device never read); RubricError (one line) otherwise."""
    where = f"rubric {path}"
    try:
        return read_bounded(Path(path), MAX_RUBRIC_BYTES, "rubric").decode("utf-8")
    except FileNotFoundError:
        raise RubricError(f"{where}: cannot read it (no such file)") from None
    except InputError as exc:
        raise RubricError(f"{where}: {str(exc).removeprefix(f'{path}: ')}") from None
    except UnicodeDecodeError as exc:
        raise RubricError(f"{where}: not UTF-8 text (byte {exc.start})") from None


def load(path: Optional[Path], cases: Sequence[Any]) -> Rubric:
    """The rubric at ``path`` (the default one when None), checked against its schema and the corpus."""
    path = DEFAULT_RUBRIC if path is None else Path(path)
    where = f"rubric {path}"
    try:
        data = load_yaml(rubric_text(path), str(path))
    except InputError as exc:  # not valid YAML, an alias, nested too deep
        raise RubricError(f"{where}: {str(exc).removeprefix(f'{path}: ')}") from None
    from embconf.model.schemas import validator

    errors = sorted(validator("rubric").iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        at = ".".join(str(p) for p in first.absolute_path) or "top level"
        raise RubricError(f"{where}: {at}: {first.message}")
    return _build(data, cases, where, str(path))


def _build(data: Mapping[str, Any], cases: Sequence[Any], where: str, source: str) -> Rubric:
    defaults = {key: data.get(key, DEFAULTS[key]) for key in SETTINGS}
    sections = requirement_sections()
    items, seen = [], set()
    for raw in data["items"]:
        if raw["id"] in seen:
            raise RubricError(f"{where}: item id {raw['id']!r} appears twice")
        seen.add(raw["id"])
        if not math.isfinite(raw["points"]):  # YAML's .inf and 1.0e+999 pass the schema's "number"
            raise RubricError(f"{where}: item {raw['id']!r}: points must be a finite number, got {raw['points']!r}")
        requirements = list(raw.get("requirements", []))
        for section in raw.get("sections", []):
            found = [req for req, sec in sections.items() if str(sec) == str(section)]
            if not found:
                raise RubricError(f"{where}: item {raw['id']!r}: the spec has no section {section!r} with requirements")
            requirements += found
        item = Item(
            raw["id"],
            raw.get("name", raw["id"]),
            float(raw["points"]),
            tuple(requirements),
            tuple(raw.get("cases", [])),
            tuple(raw.get("operations", [])),
            **{key: raw.get(key, defaults[key]) for key in SETTINGS},
            allowed_declines=tuple(data.get("allowed_declines", [])) + tuple(raw.get("allowed_declines", [])),
            extra_credit=bool(raw.get("extra_credit", False)),
            features=tuple(raw.get("features", [])),
        )
        selected = [c for c in cases if item.selects(c.id, c.requirements, c.operation)]
        if not selected:
            raise RubricError(f"{where}: item {item.id!r} matches no case of the fixtures")
        _check_features(item, selected, where)
        items.append(item)
    return Rubric(str(data.get("title", "embconf grade")), tuple(items), source)


def _check_features(item: Item, selected: Sequence[Any], where: str) -> None:
    """Each feature ``item`` names is one of the spec's, carried by some case it grades (else one line)."""
    known = spec_features()
    for feature in item.features:
        if feature not in known:
            close = difflib.get_close_matches(feature, list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else " (spec/vocabulary.json lists the features)"
            raise RubricError(f"{where}: item {item.id!r}: unknown feature {feature!r}{hint}")
        if not any(feature in c.features for c in selected):
            raise RubricError(f"{where}: item {item.id!r}: no case it grades needs the feature {feature!r}")


def requirement_sections() -> dict[str, int]:
    """Requirement id -> the number of its spec section (``spec/vocabulary.json``)."""
    return {req: section_of(req) for req in requirement_subjects()}
