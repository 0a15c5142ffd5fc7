"""The run record: every case's result, the causes of its failures and the run's verdict, with what was run
and where. One run makes one record; the JSON report, the console, JUnit, grading and the matrix derive
from it and never recompute it.
"""

from __future__ import annotations

import enum
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

from embconf.model.contract import Capabilities
from embconf.model.impl import NO_IMPL, Impl
from embconf.model.outcomes import NOT_APPLICABLE, OUTCOMES, PROBLEMS, CaseResult, Freezable, FrozenDict, Outcome
from embconf.model.symptom import SymptomKey
from embconf.model.version import __version__

REPORT_FORMAT = 2  # 2: written as JSON lines as the run goes (a header, one case a line, a footer)


SYMPTOM_ID = "symptom:"  # a symptom's id is its key after this (a mutant's is its id), so the two never collide


def is_symptom_id(cause_id: str) -> bool:
    """Whether a cause's id (:attr:`Cause.id`, as a verdict entry carries it) is a symptom's: the one reading of it."""
    return cause_id[: len(SYMPTOM_ID)] == SYMPTOM_ID


class CauseKind(enum.Enum):
    MUTANT = "mutant"  # a catalogued mistake, replayed: its exact fix is known
    SYMPTOM = "symptom"  # a measurement of what is wrong (a factor, the rows that differ, ...)


@dataclass(frozen=True)
class Cause:
    """Why cases failed: a catalogue mistake or a measured symptom.

    ``key`` is the mutant id or the symptom's key; ``id`` adds the kind (``symptom:stale_buffer``) so that
    the two never collide. ``title`` is what the mistake is in one line; ``summary`` is the line shown under
    a failing case (a mutant's carries its fix, a symptom's its measurement). ``cases`` are the cases it
    explains: one case in a case's diagnosis, all of them in the verdict; a cause that is not ``complete``
    is true of its cases but leaves another mistake in them to be named.
    """

    kind: CauseKind
    key: str
    title: str
    summary: str
    hint: str = ""
    measured: Mapping[str, Any] = field(default_factory=dict)
    alternatives: Mapping[str, str] = field(default_factory=dict)  # equally true readings: key -> title
    cases: tuple[str, ...] = ()
    complete: bool = True  # False: one mistake of several on its cases, which it does not explain on its own
    mistake: str = ""  # what the mistake is, across operations and kinds (default: the id); the verdict groups by it
    also: tuple[str, ...] = ()  # in the verdict: the ids of the other causes of the same mistake merged into this entry

    @property
    def id(self) -> str:
        return self.key if self.kind is CauseKind.MUTANT else f"{SYMPTOM_ID}{self.key}"

    @property
    def symptom(self) -> Optional[SymptomKey]:
        """A symptom's key, typed (None for a catalogue mutant): what reading a symptom back asks for."""
        return None if self.is_mutant else SymptomKey.parse(self.key)

    @property
    def identity(self) -> str:
        """The mistake this cause is (a forward and a backward mutant of one mistake share it)."""
        return self.mistake or self.id

    @property
    def is_mutant(self) -> bool:
        return self.kind is CauseKind.MUTANT

    def readings(self) -> list[Cause]:
        """This cause and each alternative reading of the same measurement, as causes of their own."""
        own = replace(self, title=self.alternatives.get(self.key, self.title)) if self.alternatives else self
        return [own] + [
            replace(self, key=key, title=title, alternatives={})
            for key, title in self.alternatives.items()
            if key != self.key
        ]

    def to_json(self) -> dict[str, Any]:
        """A case's diagnosis entry (spec/schemas/report.schema.json)."""
        entry: dict[str, Any] = {"mutant" if self.is_mutant else "symptom": self.key, "summary": self.summary}
        entry.update(description=self.title, hint=self.hint)
        if not self.is_mutant:
            entry["measured"] = dict(self.measured)
        if self.alternatives:
            entry["alternatives"] = dict(self.alternatives)
        return {**entry, "mistake": self.mistake} if self.mistake else entry

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Cause:
        """The cause a diagnosis entry (:meth:`to_json`) describes."""
        kind = CauseKind.MUTANT if "mutant" in entry else CauseKind.SYMPTOM
        return cls(
            kind,
            str(entry["mutant"] if kind is CauseKind.MUTANT else entry["symptom"]),
            str(entry.get("description", "")),
            str(entry.get("summary", "")),
            str(entry.get("hint", "")),
            dict(entry.get("measured", {})),
            dict(entry.get("alternatives", {})),
            mistake=str(entry.get("mistake", "")),
        )

    def verdict_json(self) -> dict[str, Any]:
        """A verdict entry: which mistake, and every case it explains."""
        entry = {"id": self.id, "title": self.title, "hint": self.hint, "cases": list(self.cases)}
        entry.update(summary=self.summary, **({"mistake": self.mistake} if self.mistake else {}))
        return {**entry, "also": list(self.also)} if self.also else entry

    @classmethod
    def from_verdict_json(cls, entry: Mapping[str, Any]) -> Cause:
        """The cause a verdict entry (:meth:`verdict_json`) describes."""
        symptom = is_symptom_id(str(entry["id"]))
        return cls(
            CauseKind.SYMPTOM if symptom else CauseKind.MUTANT,
            str(entry["id"])[len(SYMPTOM_ID) if symptom else 0 :],
            str(entry.get("title", "")),
            str(entry.get("summary", entry.get("title", ""))),
            str(entry.get("hint", "")),
            cases=tuple(entry.get("cases", ())),
            mistake=str(entry.get("mistake", "")),
            also=tuple(entry.get("also", ())),
        )


@dataclass(frozen=True)
class Verdict:
    """The few causes that explain a run's failures, in the order to fix them."""

    summary: str
    causes: tuple[Cause, ...]
    explained: int
    failures: int

    def cause_of(self, case_id: str) -> Optional[Cause]:
        """The first cause (in fixing order) that explains ``case_id``, if any."""
        return next((cause for cause in self.causes if case_id in cause.cases), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "explained": self.explained,
            "failures": self.failures,
            "mistakes": [cause.verdict_json() for cause in self.causes],
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Verdict:
        return cls(
            str(raw["summary"]),
            tuple(Cause.from_verdict_json(entry) for entry in raw.get("mistakes", ())),
            int(raw.get("explained", 0)),
            int(raw.get("failures", 0)),
        )


NO_FAILURES = Verdict("no failures", (), 0, 0)


@dataclass(frozen=True)
class Diagnosis:
    """What diagnosing a run found, returned to the session, which writes it into the record: each diagnosed
    case's causes, best first (case id -> causes; a case not named has none), and the run's verdict."""

    causes: Mapping[str, tuple[Cause, ...]]
    verdict: Verdict


@dataclass
class RunRecord(Freezable):
    """One run of one implementation over a selection of cases. A :class:`~embconf.session.Session` builds it
    and freezes it when it finishes: from then on it is read, never edited."""

    results: Sequence[CaseResult]
    capabilities: Capabilities
    implementation: Mapping[str, Any]  # the adapter's description: name, version, language
    unmatched_expectations: Sequence[str] = field(default_factory=list)
    duration: float = 0.0
    impl: Impl = NO_IMPL  # what named it (--impl KIND:TARGET, parsed once)
    verdict: Verdict = NO_FAILURES  # the diagnosis's, set by the session (embconf.session)
    fixtures: Mapping[str, Any] = field(default_factory=dict)  # manifest hash, modified files, case count
    nondeterministic: Mapping[str, str] = field(default_factory=dict)  # case id -> how two answers differed
    origin: Optional[Mapping[str, Any]] = None  # read back from a report: its suite, spec_version and environment
    complete: bool = True  # False: read back from a report whose run stopped before it finished
    planned: int = 0  # the cases the run was to run (a complete run ran them all)

    def freeze(self) -> None:
        """No field of the record or of its results can be set again; its lists become tuples and its
        mappings read-only."""
        for result in self.results:
            result.freeze()
        for name in ("results", "unmatched_expectations"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("implementation", "fixtures", "nondeterministic"):
            object.__setattr__(self, name, FrozenDict(getattr(self, name)))
        super().freeze()

    def named(self, name: str) -> RunRecord:
        """The same record with the implementation called ``name`` (a new frozen record: a finished one is never
        edited)."""
        renamed = replace(self, implementation={**self.implementation, "name": name})
        renamed.freeze()
        return renamed

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys((o.value for o in OUTCOMES), 0)
        for result in self.results:
            counts[result.outcome.value] += 1
        return counts

    @property
    def problems(self) -> list[CaseResult]:
        return [r for r in self.results if r.outcome in PROBLEMS]

    @property
    def declined(self) -> list[CaseResult]:
        """The cases the implementation declined within its declared capabilities (no claim may rest on them)."""
        return [r for r in self.results if r.outcome == NOT_APPLICABLE and r.declined]

    @property
    def applicable(self) -> list[CaseResult]:
        return [r for r in self.results if r.outcome != NOT_APPLICABLE]

    def count(self, outcome: Outcome) -> int:
        return sum(r.outcome == outcome for r in self.results)

    def header_json(self) -> dict[str, Any]:
        """What a report says before any case: the suite, the implementation, where it runs, the fixtures."""
        import numpy

        from embconf.model.vocabulary import spec_version

        origin = self.origin or {
            "suite": {"name": "embedding-conformance", "version": __version__},
            "spec_version": spec_version(),
            "environment": {
                "python": platform.python_version(),
                "numpy": numpy.__version__,
                "platform": platform.platform(),
                "executable": sys.executable,
            },
        }
        return {
            "report_format": REPORT_FORMAT,
            "suite": dict(origin["suite"]),
            "spec_version": origin["spec_version"],
            "implementation": {**self.implementation, "impl": str(self.impl)},
            "adapter": self.impl.kind,
            "capabilities": {**self.capabilities.to_json(), "notes": list(self.capabilities.notes)},
            "environment": dict(origin["environment"]),
            "fixtures": dict(self.fixtures),
            "planned": self.planned or len(self.results),
        }

    def footer_json(self) -> dict[str, Any]:
        """What a report says after every case: the counts, the verdict, and whether the run finished."""
        return {
            "complete": self.complete,
            "duration_s": round(self.duration, 6),
            "summary": self.summary(),
            "declined": len(self.declined),
            "unmatched_expectations": list(self.unmatched_expectations),
            "nondeterministic": dict(self.nondeterministic),
            "verdict": self.verdict.to_json(),
        }

    def to_json(self) -> dict[str, Any]:
        """The JSON report as one document (spec/schemas/report.schema.json); the file ``--report-json`` writes
        holds the same in lines (:mod:`embconf.reports.json_report`)."""
        return {
            **self.header_json(),
            **self.footer_json(),
            "cases": [result.to_json() for result in self.results],
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any], results: Optional[Sequence[CaseResult]] = None) -> RunRecord:
        """The record a report document describes (:meth:`to_json`, or a report file read back by
        :func:`embconf.reports.json_report.read`): ``RunRecord.from_json(r.to_json()).to_json() == r.to_json()``;
        ``results`` in place of its cases (a report read a line at a time). ValueError (one line) when it is not a
        report."""
        try:
            implementation = dict(document["implementation"])
            impl = Impl.read(str(implementation.pop("impl", "")))
            record = cls(
                list(results) if results is not None else [CaseResult.from_json(case) for case in document["cases"]],
                Capabilities.from_plain(document["capabilities"]),
                implementation,
                list(document.get("unmatched_expectations", [])),
                float(document.get("duration_s", 0.0)),
                impl,
                Verdict.from_json(document["verdict"]) if "verdict" in document else NO_FAILURES,
                dict(document.get("fixtures", {})),
                dict(document.get("nondeterministic", {})),
                {key: document[key] for key in ("suite", "spec_version", "environment")},
                bool(document.get("complete", True)),
                int(document.get("planned", len(document["cases"]) if results is None else len(results))),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not an embconf run report: {type(exc).__name__}: {str(exc)[:200]}") from None
        record.freeze()
        return record
