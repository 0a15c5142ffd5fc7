"""The claim a run supports, said the same by ``embconf run`` (its last line) and ``embconf matrix`` (each column):
an implementation conforms to the spec for its declared capabilities when at least one case applies, none fails
(nor is an expected failure or an unexpected pass) and none was declined within those capabilities."""

from __future__ import annotations

from dataclasses import dataclass

from embconf.model.convention import claim_clauses
from embconf.model.outcomes import NOT_APPLICABLE, PASS, PROBLEMS, XFAIL, XPASS
from embconf.model.record import RunRecord
from embconf.model.vocabulary import spec_version


@dataclass(frozen=True)
class Claim:
    conforms: bool
    statement: str  # "conforms to spec 1.3.0 for its declared capabilities; ..." or "does not conform ...: why"
    applicable: int
    declined: int
    documented: int  # failing cases that are the framework's documented choices
    glue_decided: tuple[str, ...]  # passes decided by the adapter's glue, not the implementation
    error_kinds_verified: bool


def claim(run: RunRecord) -> Claim:
    results = run.results
    declined = sum(r.outcome == NOT_APPLICABLE and r.declined for r in results)
    glue = tuple(r.id for r in results if r.decided_by and r.outcome == PASS)
    problems = [r for r in results if r.outcome in PROBLEMS or r.outcome in (XFAIL, XPASS)]
    applicable = sum(r.outcome != NOT_APPLICABLE for r in results)
    verified = run.capabilities.to_json()["error_detail"] == "kinds"
    conforms = applicable > 0 and not problems and declined == 0
    documented = sum(r.documented is not None for r in problems)
    reasons = (
        [
            f"{len(problems)} of {applicable} applicable cases do not pass"
            + (f" ({documented} of them the framework's documented choices)" if documented else "")
        ]
        if problems
        else []
    ) + ([f"{declined} cases declined within its declared capabilities"] if declined else [])
    statement = (
        f"conforms to spec {spec_version()} for its declared capabilities"
        if conforms
        else f"does not conform to spec {spec_version()}: " + (", ".join(reasons) or "no applicable case")
    )
    statement += claim_clauses(run.capabilities.conventions)
    statement += "; error kinds verified" if verified else "; error kinds NOT verified (coarse error detail)"
    if glue:
        statement += f"; {len(glue)} passes decided by the adapter's glue, not the implementation"
    return Claim(conforms, statement, applicable, declined, documented, glue, verified)
