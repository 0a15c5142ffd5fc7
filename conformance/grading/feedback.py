"""Feedback a student can act on (``feedback/NAME.md``): what lost points, ordered by points lost,
with the likely mistake and its hint, then what passed. A mistake is grouped by its cause's identity (the
verdict's cause id), never by wording; an item losing points to a mistake an earlier item already named
says so instead of repeating it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, MutableMapping, Optional, Sequence

from embconf.diagnosis.titles import merged_title
from embconf.grading import markdown as md
from embconf.grading.rubric import declined_by_submission
from embconf.grading.score import ItemScore, Score
from embconf.model.vocabulary import requirement_order, requirement_subjects

SHOWN_CASES = 5  # failing cases listed per item
DETAILED, DETAIL_LINES = 2, 7  # of which the first are shown with their message (inputs, where it differs)


def feedback(score: Score, title: str) -> str:
    record = score.record
    lines = [
        f"# {md.text(record['name'])}: {score.total:g} / {score.max:g}",
        "",
        f"{md.text(title)}. Submission: {md.code(record['entry'])} ({record['kind'] or 'unknown kind'})"
        + (f"; {md.text(record['graded'])}." if record.get("graded") else "."),
        "",
    ]
    if record.get("note"):
        lines += [f"Note: {md.text(record['note'])}.", ""]
    if record["status"] != "graded":
        return "\n".join(lines + [f"**Not graded: {md.text(record['reason'])}.** Every item scores 0.", ""])
    lines += [f"Verdict: {short_verdict(record)}{declined_note(score)}.", ""]
    required = [s for s in score.items if not s.item.extra_credit]
    losing = sorted((s for s in required if s.lost > 0), key=lambda s: (-s.lost, s.item.id))
    named: dict[str, str] = {}
    if losing:
        lines += ["## What lost points", ""]
        for item_score in losing:
            lines += _lost(item_score, named, lines_hold(record))
    passed = [s for s in required if s.lost <= 0]
    if passed:
        lines += ["## What passed", ""] + [_passed(s) for s in passed] + [""]
    extra = [s for s in score.items if s.item.extra_credit]
    if extra:
        lines += ["## Extra credit (optional extensions)", ""]
        for item_score in extra:
            lines += _lost(item_score, named, lines_hold(record)) if item_score.lost > 0 else [_extension(item_score)]
        lines.append("")
    return "\n".join(lines)


def _passed(item_score: ItemScore) -> str:
    s = item_score
    return f"- {s.item.name}: {s.points:g} / {s.item.points:g} ({s.passed} of {s.counted} cases)"


def _extension(item_score: ItemScore) -> str:
    """An extra-credit item that lost nothing: passed, or not attempted with what it grades and how to begin."""
    if item_score.counted:
        return _passed(item_score)
    item = item_score.item
    begin = "; ".join(dict.fromkeys(missing_operation(op)[1] for op in item.operations))
    return (
        f"- {md.text(item.name)}: not attempted (up to {item.points:g} extra points)."
        + (f" To attempt it: {md.text(begin)}." if begin else "")
        + f" It grades {md.text(requirements_named(item_score.graded))}."
    )


def requirements_named(requirements: Sequence[str]) -> str:
    """'EMB-BAG-2 (mode sum), EMB-BAG-3 (...)': each requirement with its subject, in spec order."""
    subjects = requirement_subjects()
    ordered = sorted(dict.fromkeys(requirements), key=requirement_order)
    return ", ".join(f"{req} ({subjects[req]})" if req in subjects else req for req in ordered) or "no case here"


def unmet_requirements(item_score: ItemScore) -> list[str]:
    """The requirements an item's failures leave unmet: a failed case's likely mistake leaves unmet what its hint
    names (of the item's requirements), whatever else the case pins (a pairwise case cites every requirement its
    boundaries exercise: a mean bag of only padding, NaN where it is a zero row, breaks EMB-BAG-6, not the rounding
    rule it also pins). Of those the other failed cases pin, each but the ones whose failures all fall on the cases of
    another requirement that fails a larger share of its cases (the mean's other cases meet EMB-BAG-3, the mode)."""
    unmet: set[str] = set()
    failing: dict[str, set[str]] = {}
    for case in item_score.failed:
        hint = str((case.get("cause") or {}).get("hint", ""))
        named = [req for req in CITED.findall(hint) if req in item_score.graded]
        unmet.update(named)
        for req in [] if named else case["requirements"]:
            if req in item_score.graded:
                failing.setdefault(req, set()).add(case["id"])
    share = {req: len(cases) / max(item_score.pinned.get(req, 0), len(cases)) for req, cases in failing.items()}

    def covers(wider: str, req: str) -> bool:
        return wider != req and failing[req] <= failing[wider] and share[wider] > share[req]

    unmet.update(req for req in failing if not any(covers(wider, req) for wider in failing))
    return sorted(unmet)


def lines_hold(record: Mapping[str, Any]) -> bool:
    """Whether line numbers in messages are the student's own (a module or package; a notebook's are its export's)."""
    return record.get("kind") in ("module", "package")


def _lost(
    item_score: ItemScore, named: Optional[MutableMapping[str, str]] = None, with_lines: bool = False
) -> list[str]:
    """An item's lost points: each mistake once (``named``: cause key and title -> the item that already named it), with
    where to look in the student's code when a traceback says (the line too when ``with_lines``)."""
    named = {} if named is None else named
    item = item_score.item
    unmet = unmet_requirements(item_score)
    lines = [
        f"### {item.name}: {item_score.points:g} / {item.points:g} (lost {item_score.lost:g})",
        "",
        f"{len(item_score.failed)} of {item_score.counted} cases failed"
        + (" (all-or-nothing item)." if item.credit == "all_or_nothing" else ".")
        + (f" Not met yet: {md.text(requirements_named(unmet))}." if item.extra_credit else ""),
        "",
    ]
    for mistake in likely_mistakes(item_score.failed):
        cases = f"{mistake.count} case{'s' if mistake.count > 1 else ''}"
        if mistake.unattempted:  # what it left out, not a mistake in what it wrote
            lines.append(f"- {md.text(mistake.title)}: {cases} counted as failed.")
            continue
        said = f"{mistake.key}\n{mistake.title}"  # said again only when these cases measured it alike
        earlier = named.get(said)
        if earlier is not None:
            lines.append(f"- The same mistake as under {earlier}, above ({cases}).")
            continue
        named[said] = item.name
        hint = f"\n  Hint: {md.text(mistake.hint)}" if mistake.hint else ""  # as written: `**` is no bold
        where = _where(mistake.frame, with_lines)
        lines.append(
            f"- Likely mistake ({cases}): {md.text(mistake.title)}{hint}"
            + (f"\n  Where to look: {where}" if where else "")
        )
    lines.append("")
    for number, case in enumerate(item_score.failed[:SHOWN_CASES]):
        message = case.get("message") or (
            "not provided: the submission lacks this operation" if not case.get("provided", True) else case["outcome"]
        )
        outcome = "not attempted" if item.unattempted(case) else case["outcome"]
        lines.append(f"- {md.code(case['id'])} ({outcome}): {md.text(_first_line(case['id'], message))}")
        detail = detail_lines(message, DETAIL_LINES) if number < DETAILED else []
        if detail:
            lines += ["", *md.block([line[:400] for line in detail], "  ")]
    if len(item_score.failed) > SHOWN_CASES:
        lines.append(f"- ... and {len(item_score.failed) - SHOWN_CASES} more (`embconf show CASE` prints a case)")
    return lines + [""]


@dataclass(frozen=True)
class Mistake:
    key: str  # the cause's id; for failures no cause explains, why they were not explained
    title: str
    hint: str
    count: int
    frame: tuple[str, int, str] = ("", 0, "")  # (file, line, function) of the student's code in a traceback
    unattempted: bool = False  # cases needing features the submission does not claim: left out, not written wrong


UNWRITTEN_HINT = "it still raises NotImplementedError: write it (the module's docstring says what it computes)"
TRACEBACK = "Traceback (most recent call last):"
UNATTEMPTED = "unattempted"  # the key of cases needing features the submission does not claim
DECLINED = "declines (embconf.Decline) inputs the rubric requires: a declined case counts as failed"
DECLINED_HINT = "handle these inputs instead of declining them (repeated ids, empty batches, ... are valid input)"
CITED = re.compile(r"\bEMB-[A-Z]+-\d+\b")  # a requirement id a hint names
FRAME = re.compile(r'File "(?:[^"]*/)?([^"/]+\.py)", line (\d+), in (\w+)')


def likely_mistakes(cases: Sequence[Mapping[str, Any]]) -> list[Mistake]:
    """The mistakes behind failed cases, one per cause (grouped by the cause's id), most cases first."""
    found: dict[str, list] = {}
    left_out: set[str] = set()  # the keys of cases not attempted
    for case in cases:
        cause = case.get("cause")
        if cause:  # the verdict's (one unwritten function is one entry, named by the function)
            key, title, hint = cause.get("id") or cause["title"], cause["title"], cause.get("hint", "")
        elif is_unwritten(case):
            key, title, hint = f"stub {case['operation']}", f"Not written yet: {case['operation']}", UNWRITTEN_HINT
        elif declined_by_submission(case):
            key, title, hint = "declined", DECLINED, DECLINED_HINT
        elif case["outcome"] == "not_applicable" and case.get("unclaimed") and case.get("provided", True):
            key, title, hint = f"{UNATTEMPTED} {' '.join(case['unclaimed'])}", not_attempted(case["unclaimed"]), ""
            left_out.add(key)
        elif not case.get("provided", True):
            key = f"missing:{case['operation']}"
            title, hint = missing_operation(case["operation"])
        else:
            key, title, hint = f"unexplained {case['outcome']}", _no_match(case), ""  # a grouping, not a symptom key
        entry = found.setdefault(key, [key, [], hint, 0, ("", 0, "")])
        entry[1].append(title)  # each case's own reading: the title said is true of every case counted
        entry[3] += 1
        if not entry[4][0]:
            entry[4] = frame(str(case.get("message", "")))
    return sorted(
        (
            Mistake(key, merged_title(titles), hint, count, frame, key in left_out)
            for key, titles, hint, count, frame in found.values()
        ),
        key=lambda m: -m.count,
    )


def not_attempted(features: Sequence[str]) -> str:
    """'mode max: not attempted (not in EmbeddingBag.MODES)': features a submission does not claim, as read."""
    from embconf.adapters.tinytorch_bags import unclaimed_reason

    said = [unclaimed_reason(feature) for feature in features]
    return f"{', '.join(what for what, _ in said)}: not attempted ({'; '.join(dict.fromkeys(why for _, why in said))})"


def missing_operation(operation: str) -> tuple[str, str]:
    """(title, hint) of an operation the submission does not provide: the TinyTorch names it would export."""
    from embconf.adapters.tinytorch import REQUIRES

    names = REQUIRES.get(operation)
    if not names:
        return f"{operation} is missing from the submission", "implement it with the TinyTorch API's names"
    listed = " or ".join(names)
    return (
        f"{operation} is missing from the submission: the module has no {listed}",
        f"define {listed} in the module (if a notebook defines it, export that cell: `#| export`)",
    )


def is_unwritten(case: Mapping[str, Any]) -> bool:
    """A case of an operation the submission has not written yet (it raises NotImplementedError)."""
    return case["outcome"] == "error" and "NotImplementedError" in str(case.get("message", ""))


def detail_lines(message: str, count: int) -> list[str]:
    """Up to ``count`` lines of a case message after its first: the inputs, and of a traceback its last frames
    (down to the line that raised), never its first frames alone."""
    lines = message.splitlines()[1:]
    if TRACEBACK not in lines or len(lines) <= count:
        return lines[:count]
    start = lines.index(TRACEBACK)
    head = lines[:start][: max(1, count - 4)]
    frames = [line for line in lines[start + 1 :] if line.strip().strip("^~") != ""]
    room = count - len(head) - 2
    return [*head, TRACEBACK, *(["  ..."] if len(frames) > room else []), *frames[-room:]]


def frame(message: str) -> tuple[str, int, str]:
    """The innermost traceback frame in the student's module (embeddings.py), if the message holds one."""
    frames = [m for m in FRAME.finditer(message) if m.group(1) == "embeddings.py"]
    if not frames:
        return ("", 0, "")
    last = frames[-1]
    return (last.group(1), int(last.group(2)), last.group(3))


def _where(frame: tuple[str, int, str], with_lines: bool) -> str:
    name, line, function = frame
    if not name:
        return ""
    return f"`{function}`" + (f", line {line} of {name}" if with_lines else "")


def _first_line(case_id: str, message: str) -> str:
    """A case message's first line without the case id, requirements and operation it starts with."""
    line = message.splitlines()[0] if message.strip() else ""
    return re.sub(rf"^{re.escape(case_id)} \[[^\]]*\] \w+: ", "", line)[:300]


def _no_match(case: Mapping[str, Any]) -> str:
    return {
        "error": "raises an unexpected exception",
        "crash": "crashes its process",
        "timeout": "does not answer in time",
    }.get(case["outcome"], "no known mistake matches; compare with the case shown (`embconf show CASE`)")


def top_mistake(record: Mapping[str, Any]) -> str:
    mistakes = record.get("verdict", {}).get("mistakes") or []
    return mistakes[0]["title"] if mistakes else ""


def result_output(
    item_score: ItemScore, named: Optional[MutableMapping[str, str]] = None, with_lines: bool = False
) -> str:
    """The text Gradescope shows for one rubric item (``named`` as for :func:`_lost`, in the tests' order)."""
    if not item_score.failed:
        if item_score.item.extra_credit:
            return _extension(item_score)[2:]
        return (
            f"{item_score.passed} of {item_score.counted} cases pass."
            if item_score.counted
            else "no case of this item could run"
        )
    return "\n".join(_lost(item_score, named, with_lines)[2:]).strip()


def record_output(record: Mapping[str, Any], score: Score) -> str:
    if record["status"] != "graded":
        return f"Not graded: {md.text(record['reason'])}."
    return f"{score.total:g} / {score.max:g}. {short_verdict(record)}{declined_note(score)}."


def declined_note(score: Score) -> str:
    """'; 12 declined cases count as failed' when the rubric counts declined cases as failed, else ''."""
    declined = {case["id"] for item in score.items for case in item.failed if case.get("declined")}
    return f"; {len(declined)} declined case{'s' if len(declined) != 1 else ''} count as failed" if declined else ""


def short_verdict(record: Mapping[str, Any]) -> str:
    """'28 of 165 applicable cases fail; 1 likely mistake, named below': the counts, the mistakes left to the items."""
    verdict = record.get("verdict") or {}
    summary, mistakes = str(verdict.get("summary", "")), verdict.get("mistakes") or []
    if not mistakes:
        return summary
    return f"{summary.split('; ', 1)[0]}; {len(mistakes)} likely mistake{'s' if len(mistakes) > 1 else ''}, named below"
