"""Scoring a record against a rubric: points per item, and what each item lost and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from embconf.grading.rubric import Item, Rubric


@dataclass
class ItemScore:
    item: Item
    points: float = 0.0
    passed: int = 0
    counted: int = 0
    failed: list[Mapping[str, Any]] = field(default_factory=list)  # the recorded cases that counted as failed
    graded: list[str] = field(default_factory=list)  # the item's requirements that its recorded cases pin
    pinned: dict[str, int] = field(default_factory=dict)  # requirement -> how many counted cases pin it
    unattempted: list[Mapping[str, Any]] = field(default_factory=list)  # of ``failed``: needing features unclaimed

    @property
    def lost(self) -> float:
        """Points not earned; an extra-credit item loses nothing until attempted (some case of it counts)."""
        if self.item.extra_credit and not self.counted:
            return 0.0
        return round(self.item.points - self.points, 2)


@dataclass
class Score:
    record: Mapping[str, Any]
    items: list[ItemScore]

    @property
    def total(self) -> float:
        return round(sum(s.points for s in self.items), 2)

    @property
    def max(self) -> float:
        return round(sum(s.item.points for s in self.items if not s.item.extra_credit), 2)

    @property
    def reason(self) -> str:
        return str(self.record.get("reason", ""))


def score(record: Mapping[str, Any], rubric: Rubric) -> Score:
    """The points ``record`` earns under ``rubric`` (a problem record earns none)."""
    items = []
    for item in rubric.items:
        result = ItemScore(item)
        for case in record.get("cases", ()):
            if not item.selects(case["id"], case["requirements"], case["operation"]):
                continue
            result.graded += [req for req in case["requirements"] if item.names(req) and req not in result.graded]
            counts = item.counts(case)
            if counts is None:
                continue
            result.counted += 1
            for req in case["requirements"]:
                if item.names(req):
                    result.pinned[req] = result.pinned.get(req, 0) + 1
            if counts:
                result.passed += 1
            else:
                result.failed.append(case)
                result.unattempted += [case] if item.unattempted(case) else []
        if result.counted:
            fraction = result.passed / result.counted
            result.points = round(item.points * (fraction if item.credit == "partial" else float(fraction == 1.0)), 2)
        items.append(result)
    return Score(record, items)
