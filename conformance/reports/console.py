"""The console report: a progress line while running, a per-requirement summary (requirements with no applicable
case folded into one line unless verbose), then the failures, and last the claim ``embconf matrix`` makes for
the same run (conforms or does not conform to the spec for its declared capabilities)."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Protocol, Sequence

from embconf.model.claim import claim
from embconf.model.convention import ordered
from embconf.model.outcomes import ERROR, FAIL, NOT_APPLICABLE, OUTCOMES, PASS, PROBLEMS, XPASS, CaseResult
from embconf.model.record import RunRecord
from embconf.model.symptom import PLAIN
from embconf.model.vocabulary import requirement_order

COLOURS = {
    "pass": "32",
    "fail": "31",
    "error": "31",
    "crash": "35",
    "timeout": "35",
    "xfail": "33",
    "xpass": "33",
    "not_applicable": "2",
}


class Stream(Protocol):
    """Where the console writes: a text file, or :class:`~embconf.untrusted.write.ConsoleStream`."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class Console:
    """The console report of a run record: progress while it runs, then by requirement, verdict and failures."""

    def __init__(
        self, stream: Stream = sys.stdout, colour: bool | None = None, quiet: bool = False, verbose: bool = False
    ) -> None:
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.colour = self.tty if colour is None else colour
        self.quiet = quiet
        self.verbose = verbose  # every requirement's row, those with no applicable case too

    def paint(self, text: str, outcome: str) -> str:
        return f"\033[{COLOURS[outcome]}m{text}\033[0m" if self.colour and outcome in COLOURS else text

    def progress(self, number: int, total: int, result: CaseResult) -> None:
        """One line rewritten in place on a terminal; a line every 10% elsewhere."""
        if self.quiet:
            return
        if self.tty:
            self.stream.write(f"\r[{number}/{total}] {result.id[:60]:<60}")
            if number == total:
                self.stream.write("\r" + " " * 80 + "\r")
            self.stream.flush()
        elif number == total or number % max(total // 10, 1) == 0:
            self.stream.write(f"[{number}/{total}] cases run\n")

    def report(self, run: RunRecord, fixtures_note: str = "") -> None:
        write = self.stream.write
        write(headline(run) + "\n")
        for convention in ordered(run.capabilities.conventions):
            write(
                f"Declared {convention.kind} convention: {convention.describe()}; "
                "the canonical cases it changes do not apply, the cases under it do\n"
            )
        if fixtures_note:
            write(fixtures_note + "\n")
        write("\nBy requirement:\n")
        folded = []
        for req, counts in sorted(by_requirement(run.results).items(), key=lambda kv: requirement_order(kv[0])):
            bad = sum(counts[o] for o in PROBLEMS) + counts[XPASS]
            applicable = sum(n for o, n in counts.items() if o != NOT_APPLICABLE)
            if not applicable and not self.verbose:
                folded.append(req)
                continue
            status = (
                self.paint("FAIL", "fail")
                if bad
                else (self.paint("ok", "pass") if counts[PASS] else self.paint("n/a", "not_applicable"))
            )
            detail = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
            write(f"  {req:<12} {status:<4}  {detail}\n")
        if folded:
            write(
                self.paint(
                    f"  {len(folded)} more with no applicable case: {_ranges(folded)} (-v lists each)", "not_applicable"
                )
                + "\n"
            )
        problems = [r for r in run.results if r.outcome in PROBLEMS or r.outcome == XPASS]
        if problems:
            write(f"\nVerdict: {run.verdict.summary}\n")
            write(f"\nFailures ({len(problems)}):\n")
            for result in problems:
                write(f"\n{self.paint(result.outcome.upper(), result.outcome)} {result.message}\n")
                write(diagnosis_lines(result))
                if result.documented is not None:
                    write(f"  documented choice: {result.documented.sentence} ({result.documented.link})\n")
                if result.stderr:
                    write(
                        "  stderr: " + result.stderr.strip()[-2000:].replace("\n", "\n          ") + "\n"
                    )  # the tail: where it died
        for title, declined in (
            ("Not applicable (outside the implementation's declared capabilities)", False),
            ("Declined by the implementation (within its declared capabilities)", True),
        ):
            reasons = not_applicable_reasons([r for r in run.results if r.declined == declined])
            if reasons:
                write(f"\n{title}:\n")
                for reason, count in reasons:
                    write(f"  {count:>4}  {reason}\n")
        for entry in run.unmatched_expectations:
            write(f"\nwarning: expectation matches no case: {entry}\n")
        write("\n" + self.summary_line(run) + "\n")
        found = claim(run)
        name = run.implementation.get("name") or str(run.impl)
        write(self.paint(f"{name} {found.statement}", "pass" if found.conforms else "fail") + "\n")

    def notes(self, run: RunRecord) -> None:
        """A line for each case whose answers differed (under --repeat, or asked again whole)."""
        for case_id, change in run.nondeterministic.items():
            self.stream.write(f"note: {case_id}: {change}\n")

    def summary_line(self, run: RunRecord) -> str:
        """'120 pass, 30 not_applicable (22 declined within its declared capabilities)'."""
        summary = run.summary()
        parts = [self.paint(f"{summary[o]} {o}", o) for o in OUTCOMES if summary[o]]
        declined = len(run.declined)
        if declined:
            parts.append(self.paint(f"{declined} declined within its declared capabilities", "xfail"))
        return ", ".join(parts)


def _ranges(requirements: list[str]) -> str:
    """'EMB-HLF-1..4, EMB-ROPE-2': consecutive requirements of one family joined."""
    groups: list[list[str]] = []
    for req in requirements:
        family, _, number = req.rpartition("-")
        last = groups[-1][-1] if groups else ""
        previous_family, _, previous = last.rpartition("-")
        if (
            groups
            and family == previous_family
            and number.isdigit()
            and previous.isdigit()
            and int(number) == int(previous) + 1
        ):
            groups[-1].append(req)
        else:
            groups.append([req])
    return ", ".join(g[0] if len(g) == 1 else f"{g[0]}..{g[-1].rpartition('-')[2]}" for g in groups)


def diagnosis_lines(result: CaseResult, limit: int = 3) -> str:
    """The diagnosis under a failure: known mistakes as 'likely cause', measured symptoms as 'measured'."""
    lines = [
        f"  {'likely cause' if cause.is_mutant else 'measured'}: {cause.summary}\n" for cause in result.causes[:limit]
    ]
    if (
        result.causes
        and all(c.symptom.family in PLAIN for c in result.causes if c.symptom is not None)
        and not any(c.is_mutant for c in result.causes)
    ):  # only a difference said in plain words: no mistake is named
        lines.insert(0, "  likely cause: no known mistake matches; what was measured:\n")
    if (
        not lines
        and result.outcome in (FAIL, ERROR)
        and (result.actual is not None or result.error_kind is not None or result.outcome == ERROR)
    ):
        lines.append("  likely cause: no known mistake matches, and no symptom could be measured\n")
    return "".join(lines)


def headline(run: RunRecord) -> str:
    from embconf.model.version import __version__
    from embconf.model.vocabulary import spec_version

    impl = run.implementation
    name = " ".join(part for part in (impl.get("name", ""), impl.get("version", "")) if part)
    language = f" [{impl['language']}]" if impl.get("language") else ""
    version, spec = (
        (run.origin["suite"]["version"], run.origin["spec_version"]) if run.origin else (__version__, spec_version())
    )
    unfinished = (
        "" if run.complete else f" (INCOMPLETE: the run stopped after {len(run.results)} of {run.planned} cases)"
    )
    return f"embconf {version} (spec {spec}) against {name}{language}: {len(run.results)} cases in {run.duration:.2f}s{unfinished}"


def not_applicable_reasons(results: Sequence[CaseResult]) -> list[tuple[str, int]]:
    """Why cases did not apply, most common first."""
    counts: dict[str, int] = defaultdict(int)
    for result in results:
        if result.outcome == "not_applicable":
            counts[result.message] += 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def by_requirement(results: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(OUTCOMES, 0))
    for result in results:
        for req in result.requirements:
            table[req][result.outcome] += 1
    return dict(table)
