"""Where ``embconf run`` writes its reports: checked before the run, written before the console.

The report paths (``--report-json``, ``--junit``, ``--write-expectations``) are checked for writability
before anything runs (:meth:`ReportTargets.check`). The JSON report is written as the run goes (JSON lines:
:meth:`ReportTargets.live_json`); the others right after the run, before the console report
(:meth:`ReportTargets.write`), so a console whose reader went away (``| head``) costs no report. When a
report goes to stdout (``-`` or ``/dev/stdout``), the console goes to stderr.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TextIO

from embconf.model.record import RunRecord
from embconf.untrusted.write import OutputError, OutputTarget

if TYPE_CHECKING:
    from embconf.reports.json_report import JsonLinesReport


@dataclass(frozen=True)
class ReportTargets:
    json: Optional[OutputTarget] = None
    junit: Optional[OutputTarget] = None
    expectations: Optional[OutputTarget] = None

    @classmethod
    def check(cls, json: Any = None, junit: Any = None, expectations: Any = None) -> "ReportTargets":
        """The checked targets of the given paths (None: not asked for); OutputError names the first bad one."""
        return cls(*(OutputTarget.check(p) if p is not None else None for p in (json, junit, expectations)))

    def console_stream(self) -> TextIO:
        """stderr when a report is written to stdout, else stdout."""
        return (
            sys.stderr
            if any(t is not None and t.is_stdout for t in (self.json, self.junit, self.expectations))
            else sys.stdout
        )

    def live_json(self) -> Optional[JsonLinesReport]:
        """The JSON report, written as the run goes (None when not asked for)."""
        from embconf.reports.json_report import JsonLinesReport

        return JsonLinesReport(self.json) if self.json is not None else None

    def write(self, run: RunRecord) -> tuple[list[str], list[str]]:
        """Write the reports asked for that are written once the run is over (JUnit, expectations; the JSON
        report is written as the run goes: :meth:`live_json`): (notes for the console, one-line write errors).
        Each is independent."""
        notes: list[str] = []
        errors: list[str] = []
        if self.junit is not None:
            from embconf.reports import junit

            _attempt(errors, lambda: junit.write(self.junit, run, str(run.impl)))
        if self.expectations is not None:
            from embconf.corpus.expectations import write_from_run

            count = _attempt(errors, lambda: write_from_run(self.expectations, run.results, str(run.impl)))
            if count is not None:
                notes.append(f"wrote {count} expectations to {self.expectations.name}")
        return notes, errors


def _attempt(errors: list[str], write) -> Any:
    try:
        return write()
    except OutputError as exc:
        errors.append(str(exc))
        return None
