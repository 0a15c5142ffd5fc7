"""Where an output's differences sit, said by the inputs' own structure, and said only where it separates.

A failing output's elements belong to units the case's inputs name (``where``, per family): a table row (an id),
a position of the ids (its id, its place in the sequence), a bag (empty, of one id, holding padding_idx, weighted,
holding an id), a position of a table or of a rotary input (against the table's length or the original context);
and to columns (a band, the sine or the cosine columns, a rotation's pairs). A description of the units is a
predicate on them; it is said only when it separates exactly on the case: every unit it names differs and no other
unit does (``separates``), and likewise for the columns. Of the descriptions that separate, the smallest is said
(a kind before one id, one id before a range, a range before a short list); nothing when none separates, or when
every unit (every column) differs: that says nothing about where.

The sentence is the plain reading's (``symptoms._values``): a difference no catalogue mistake and no fitted
symptom explains, located. Its title (what the verdict shows for every case it cites) names the structure
("the bags holding id V-1"), its summary the case's own numbers ("id 7, 3 of 5 bags"). Readings that name the
same units in the inputs' terms (the bags holding id V-1 forward, the row of id V-1 backward) share one identity
(``LOCATED``): one entry in the verdict. A case a catalogue mistake matches keeps no plain reading
(``said_by_mistakes``): what was measured there is that mistake's difference, said in its words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.model.record import Cause, RunRecord
from embconf.model.symptom import PLAIN

SHOWN = 3  # ids (or columns) a description lists at most
LOCATED = "located"  # the identity of a plain reading whose differing units the inputs name
FEW_COLUMNS = "in a few columns"  # columns listed, said only where no unit is described


KIND, NAMED, COMMON, ONE, RANGE, FEW, INDEX = range(7)  # the ranks of descriptions: the smaller said first
# KIND: what the spec names (empty bags, padding_idx, rows no id uses); NAMED: one id the table names (V-1, 0);
# COMMON: a kind most units have (bags of one id, ids that occur once); then one id, a range, a few ids, an index


@dataclass(frozen=True)
class Tag:
    """A predicate on the units: ``mask`` (one bool per unit), said as ``title`` in general (the verdict's words,
    true of every case with this structure) and ``said`` on the case (its own ids and counts); ``rank`` orders
    descriptions, the smallest first."""

    title: str
    said: str
    mask: np.ndarray
    rank: int = KIND
    kind: str = ""  # what the units are in the inputs' terms (an id's name, a bag kind), across outputs


@dataclass
class Units:
    """How an output's elements group into units: ``axes`` (the output's axes that index a unit, the rest are one
    unit's elements), the unit's ``noun``, the predicates on units and the ordered attributes (one value per unit)
    whose ranges describe them."""

    noun: str
    axes: tuple[int, ...]
    tags: list[Tag] = field(default_factory=list)
    ordered: list[tuple[str, np.ndarray, int]] = field(default_factory=list)  # (what the value is, one per unit, rank)
    holding: Optional[Holding] = None
    silent: Optional[np.ndarray] = None  # units no mistake of this kind can change (a rotation at position 0)

    def add(self, title: str, said: str, mask: Any, kind: str = "", rank: int = KIND) -> None:
        self.tags.append(Tag(title, said, np.asarray(mask, dtype=bool).reshape(-1), rank, kind))

    def differing(self, differs: np.ndarray) -> np.ndarray:
        """One bool per unit (in C order of ``axes``): whether any of its elements differs."""
        moved = np.moveaxis(differs, self.axes, tuple(range(len(self.axes))))
        rest = tuple(range(len(self.axes), differs.ndim))
        return (np.any(moved, axis=rest) if rest else moved).reshape(-1)

    def kept(self, differing: np.ndarray) -> tuple[Units, np.ndarray]:
        """(these units without the silent ones that match, their differing mask): a unit no mistake can change
        says nothing by matching (every rotation leaves position 0 as it is)."""
        if self.silent is None or self.silent.shape != differing.shape:
            return self, differing
        keep = ~(self.silent & ~differing)
        tags = [replace(t, mask=t.mask[keep]) for t in self.tags if t.mask.shape == keep.shape]
        ordered = [(what, values[keep], rank) for what, values, rank in self.ordered if values.shape == keep.shape]
        held = replace(self.holding, ids=self.holding.ids[keep]) if self.holding is not None else None
        return Units(self.noun, self.axes, tags, ordered, held), differing[keep]

    def described(self, differing: np.ndarray) -> Optional[Tag]:
        """The smallest description that separates the differing units, or None."""
        found = [t for t in self.tags if separates(t.mask, differing)]
        found += [t for what, values, rank in self.ordered if (t := ranged(values, differing, what, rank)) is not None]
        held = self.holding.described(differing) if self.holding is not None else None
        found += [held] if held is not None else []
        return min(found, key=lambda t: t.rank) if found else None


@dataclass(frozen=True)
class Found:
    """A separating description: the title (the structure's words), the case's own words, and what the differing
    units are in the inputs' terms when that names them across outputs (an id V-1, the empty bags), else ""."""

    title: str
    said: str
    kind: str = ""


def separates(mask: np.ndarray, differing: np.ndarray) -> bool:
    """The predicate said: exactly the units of ``mask`` differ (some do, some do not)."""
    return (
        mask.shape == differing.shape and bool(mask.any()) and not bool(mask.all()) and np.array_equal(mask, differing)
    )


SINGULAR = re.compile(r"\b(position|row|bag|sequence)s\b")


def ranged(values: np.ndarray, differing: np.ndarray, what: str, rank: int = RANGE) -> Optional[Tag]:
    """The range lo..hi of an ordered attribute (``values``, one per unit; ``what`` names it: "at the positions")
    that holds exactly the differing units, as a Tag (its numbers said in the title too: they are the
    description), else None."""
    if values.shape != differing.shape or not differing.any() or differing.all():
        return None
    lo, hi = int(values[differing].min()), int(values[differing].max())
    mask = (values >= lo) & (values <= hi)
    if not separates(mask, differing):
        return None
    if lo == hi:  # one unit: said in the singular ("at the position 7", "in the bag 2")
        said = f"{SINGULAR.sub(lambda m: m.group(1), what)} {lo}"
    elif hi == int(values.max()):
        said = f"{what} {lo} and above"
    elif lo == int(values.min()):
        said = f"{what} up to {hi}"
    else:
        said = f"{what} {lo}..{hi}"
    return Tag(said, said, mask, rank)


def listed(numbers: list[int]) -> str:
    """[3] -> '3'; [3, 5] -> '3 and 5'; [1, 2, 4] -> '1, 2 and 4'."""
    text = [str(n) for n in numbers]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]


def runs(numbers: list[int]) -> str:
    """[16, 17, 18, 64, 65] -> '16..18 and 64..65'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][-1] + 1:
            spans[-1].append(n)
        else:
            spans.append([n])
    return " and ".join(f"{s[0]}..{s[-1]}" if len(s) > 1 else str(s[0]) for s in spans)


def sentence(
    name: str, units: Optional[Units], differs: np.ndarray, columns: Callable[[np.ndarray], Optional[Found]]
) -> Optional[Found]:
    """Where ``name``'s differences sit (``differs``, one bool per element), when a description separates them;
    ``columns`` describes a mask of differing columns (the last axis), when one separates them."""
    if not differs.any():
        return None
    unit, differing = None, None
    if units is not None and all(a < differs.ndim for a in units.axes):
        units, differing = units.kept(units.differing(differs))
        unit = units.described(differing)
    band = None
    if differs.ndim >= 1 and differs.shape[-1] >= 2 and (units is None or differs.ndim - 1 not in units.axes):
        wide = np.any(differs.reshape(-1, differs.shape[-1]), axis=0)
        band = columns(wide) if wide.any() and not wide.all() else None
        band = None if band is not None and unit is not None and band.title == FEW_COLUMNS else band
    if unit is None or units is None or differing is None:
        if band is None:
            return None
        return Found(
            f"every difference in '{name}' lies {band.title}", f"every difference in '{name}' lies {band.said}"
        )
    count = f"{int(differing.sum())} of {differing.size} {units.noun}s"
    title = f"every difference in '{name}' lies {unit.title}" + (f", {band.title}" if band else "")
    said = f"every difference in '{name}' lies {unit.said} ({count})" + (f", {band.said}" if band else "")
    every = f", and every such {units.noun} differs"
    return Found(title + every, said + every, unit.kind)


def named_id(value: int, vocab: Optional[int], padding: Optional[int]) -> str:
    """What an id is in the table's terms: padding_idx, V-1 (the last row), 0 (the first); "" otherwise."""
    if padding is not None and value == padding:
        return "padding_idx"
    if vocab is not None and value == vocab - 1:
        return "V-1"
    return "0" if value == 0 else ""


NO_ID = np.iinfo(np.int64).min  # an empty slot of ``Holding.ids``


@dataclass(frozen=True)
class Holding:
    """The ids each unit holds: ``ids`` (units, slots), NO_ID in an unused slot; ``words`` says a unit holding an
    id ("in the bags holding"); the table's size and padding_idx name an id (V-1, padding_idx)."""

    ids: np.ndarray
    words: str
    plural: str  # a unit holding one of several ids ("in the rows of")
    vocab: Optional[int] = None
    padding: Optional[int] = None

    def described(self, differing: np.ndarray) -> Optional[Tag]:
        """The ids whose every holder differs, when the units holding them are exactly the differing ones and
        they are at most SHOWN: one (named: V-1, padding_idx, 0) or a few."""
        if self.ids.shape[:1] != differing.shape or not differing.any() or differing.all():
            return None
        inside, outside = np.unique(self.ids[differing]), np.unique(self.ids[~differing])
        clean = np.setdiff1d(inside[inside != NO_ID], outside)
        priority = {"padding_idx": 0, "V-1": 1, "0": 2, "": 3}
        named = sorted(clean.tolist(), key=lambda v: priority[named_id(int(v), self.vocab, self.padding)])
        for value in named[:MAX_SINGLE]:  # one id that alone separates, a named one first
            mask = np.asarray(np.any(self.ids == value, axis=1), dtype=bool)
            if separates(mask, differing):
                return self._one(int(value), mask)
        mask = np.asarray(np.isin(self.ids, clean).any(axis=1), dtype=bool)
        if not 2 <= clean.size <= SHOWN or not separates(mask, differing):
            return None
        values = listed([int(v) for v in clean]).replace(" and ", " or ")
        return Tag(f"{self.plural} one of a few ids", f"{self.plural} ids {values}", mask, FEW)

    def _one(self, value: int, mask: np.ndarray) -> Tag:
        name = named_id(value, self.vocab, self.padding)
        said = f"{self.words} id {value}" + (f" ({name})" if name not in ("", "0") else "")
        if name:
            return Tag(f"{self.words} id {name}", said, mask, NAMED, f"id {name}")
        return Tag(f"{self.words} one id", said, mask, ONE)


MAX_SINGLE = 64  # ids tried one by one at most


def where(
    operation: str,
    inputs: Mapping[str, Any],
    name: str,
    differs: np.ndarray,
    rows: Optional[list[int]] = None,
) -> Optional[Found]:
    """Where ``name``'s differing elements (``differs``, of the golden's shape) sit, said by the inputs of a case of
    ``operation``, when a description separates them; ``rows`` are the rows of a sampled output the goldens pin."""
    from embconf.diagnosis.localise_units import columns_of, units_of

    try:
        units = units_of(operation, inputs, name, differs.shape, rows)
        return sentence(name, units, differs, columns_of(operation, inputs, differs.shape))
    except (KeyError, TypeError, ValueError, IndexError):  # inputs of another form than the family's: nothing said
        return None


def located(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray, plain: str
) -> list[Cause]:
    """The plain reading of output ``name`` (``plain``: what was measured, in plain words; "" where a family says
    no plain numbers, a rotation), said with where its differences sit when a description separates them: the
    verdict's title names the structure, the case's summary its own ids and counts. Its key is the plain one."""
    from embconf.diagnosis.difference import differing, plain_key
    from embconf.diagnosis.symptoms.base import symptom

    raw = case.raw_expected["outputs"].get(name)
    rows = raw.get("rows") if isinstance(raw, Mapping) else None
    found = where(case.operation, inputs, name, differing(want, got, rule=case.tolerance.get(name)), rows)
    if found is None:
        return [symptom(plain_key(case.operation, name, plain), plain, complete=False)] if plain else []
    summary = f"{plain}; {found.said}" if plain else found.said
    mistake = f"{LOCATED}:{found.kind}" if found.kind else ""  # one defect where outputs name the same units
    key = plain_key(case.operation, name, plain)
    return [symptom(key, summary, title=found.title, complete=False, mistake=mistake)]


def said_by_mistakes(run: RunRecord) -> None:
    """One defect, one entry: a case a catalogue mistake matches (its reply is the implementation's) keeps no plain
    reading (located or not): what was measured is that mistake's difference, said in its words."""
    for result in run.results:
        if any(c.is_mutant and c.complete for c in result.causes):
            result.causes = [c for c in result.causes if not _plain(c)]


def _plain(cause: Cause) -> bool:
    key = cause.symptom
    return not cause.is_mutant and key is not None and key.family in PLAIN
