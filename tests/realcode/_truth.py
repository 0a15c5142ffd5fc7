"""The recorded truth of a corpus module, and the audit of every sentence the diagnosis printed about it.

A module records its truth in two literals, read with ``ast`` (never imported):

- ``MISTAKES = [{"phrase": ..., "mutants": [...], "claims": [...]}, ...]``: each true mistake, the catalogue mutants
  that model it and the symptom ids that state it (``fnmatch`` patterns such as ``symptom:repeated_rows:*``);
- ``FACTS = {...}``: what its code does where a sentence can say something checkable about it (the fields of
  :class:`Facts`, each typed; a field left out is the spec's behaviour).

:func:`audit` reads a run's JSON report and judges every printed sentence (each verdict entry, and each case's
diagnosis lines the console shows) as a typed claim: a mutant or a symptom id that must name one of the module's
mistakes or a measurement verified on every case it cites, and the preconditions a sentence states (an
off-by-one check, no range check, a check before use, the forward's validation, values right once cast,
advice to declare what is declared) checked against the facts. Written for this corpus; imports nothing from
embconf (the caller passes the catalogue's identities).
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Mapping, get_args

IdCheck = Literal["spec", "none", "untyped", "off_by_one", "upper_only", "clamps"]
LengthCheck = Literal["spec", "none", "off_by_one", "ignores_start", "untyped"]
FAILING = ("fail", "error", "crash", "timeout")
LITERALS = {"IdCheck": get_args(IdCheck), "LengthCheck": get_args(LengthCheck)}


@dataclass(frozen=True)
class Facts:
    """What a module's code does, where the diagnosis may state it (defaults: as the spec says)."""

    forward_ids: IdCheck = "spec"  # the lookup's id range check
    backward_ids: IdCheck = "spec"  # the backward's
    length_check: LengthCheck = "spec"  # start_pos + T <= max_seq_len
    own_checks: tuple[str, ...] = ()  # error kinds the code checks itself before use, raising another exception
    dtype_only: tuple[str, ...] = ()  # operations whose output has another dtype and values right once cast
    declares: tuple[str, ...] = ()  # what the module declares (EMBCONF_SINUSOID_CONVENTION, features)
    nan_widths: tuple[str, ...] = ()  # the widths D whose sinusoid table the code fills with NaN


@dataclass(frozen=True)
class Mistake:
    phrases: tuple[str, ...]
    mutants: tuple[str, ...]
    claims: tuple[str, ...] = ()

    def named_by(self, ids: list[str]) -> bool:
        """Typed: one of ``ids`` (a cause id, or an id merged into its entry) is one of its mutants or claims."""
        return any(i in self.mutants or any(fnmatch.fnmatchcase(i, p) for p in self.claims) for i in ids)

    def phrased_in(self, text: str) -> bool:
        return any(p.lower() in text.lower() for p in self.phrases)


@dataclass(frozen=True)
class Truth:
    kind: str
    mistakes: tuple[Mistake, ...]
    facts: Facts = field(default_factory=Facts)


def read_truth(path: Path) -> Truth:
    """A module's truth from its source alone; ValueError for a malformed record."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    kind, raw, facts, declared = "functions", None, {}, []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "_tt":
            kind = "tinytorch"
        if not isinstance(node, ast.Assign):
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if "MISTAKES" in names:
            raw = ast.literal_eval(node.value)
        if "FACTS" in names:
            facts = ast.literal_eval(node.value)
        if "EMBCONF_SINUSOID_CONVENTION" in names or "EMBCONF_SINUSOID_PARAMETERS" in names:
            declared.append("sinusoid")
    if not isinstance(raw, list) or not raw:
        raise ValueError("no MISTAKES list")
    return Truth(kind, tuple(_mistake(item) for item in raw), _facts(facts, declared))


def _mistake(item: Any) -> Mistake:
    phrase = item.get("phrase") if isinstance(item, dict) else None
    phrases = [phrase] if isinstance(phrase, str) else phrase
    if not isinstance(phrases, list) or not phrases or not all(isinstance(p, str) and p for p in phrases):
        raise ValueError(f"a MISTAKES entry needs a non-empty 'phrase' (a string or a list of them): {item!r}")
    unknown = set(item) - {"phrase", "mutants", "claims"}
    if unknown:
        raise ValueError(f"a MISTAKES entry has unknown keys {sorted(unknown)}")
    return Mistake(tuple(phrases), tuple(item.get("mutants", ())), tuple(item.get("claims", ())))


def _facts(raw: Mapping[str, Any], declared: list[str]) -> Facts:
    known = {f.name: f for f in fields(Facts)}
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in known:
            raise ValueError(f"FACTS has no field {name!r} (known: {sorted(known)})")
        allowed = LITERALS.get(str(known[name].type))
        if allowed is not None and value not in allowed:
            raise ValueError(f"FACTS[{name!r}] = {value!r}, not one of {allowed}")
        if allowed is None and not (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            raise ValueError(f"FACTS[{name!r}] must be a list of strings, got {value!r}")
        values[name] = tuple(value) if isinstance(value, (list, tuple)) else value
    values["declares"] = tuple(values.get("declares", ())) + tuple(declared)
    return Facts(**values)


HINT = "\nHint: "  # a claim's text: the title as printed, then its hint when one is printed


@dataclass(frozen=True)
class Claim:
    """One printed sentence: where (the verdict, or a case), the cause ids it states, its text, the cases it cites."""

    where: str
    ids: tuple[str, ...]
    text: str
    cases: tuple[str, ...]


def printed(report: Mapping[str, Any]) -> list[Claim]:
    """Every sentence a run states: each verdict entry, and every diagnosis entry of each failing case (the console
    shows the first three, the JSON report, JUnit and ``embconf explain`` every one)."""
    claims = [
        Claim("verdict", (m["id"], *m.get("also", ())), m["title"], tuple(m["cases"]))
        for m in report["verdict"].get("mistakes") or []
        if m.get("id")
    ]
    for case in report["cases"]:
        if case["outcome"] not in FAILING:
            continue
        for entry in case.get("diagnosis") or []:
            ident = entry.get("mutant") or f"symptom:{entry['symptom']}"
            claims.append(Claim(case["id"], (ident,), str(entry.get("summary", "")), (case["id"],)))
    return claims


# Symptoms that state a measurement, true when every case they cite shows it (verified on the report itself).
MEASURED = (
    "symptom:untyped:*",
    "symptom:constructor:*",
    "symptom:cast_unchecked:*",
    "symptom:accepts:*",
    "symptom:accepts_non_integer_start_pos",
    "symptom:boundary:accepts_s+T=L+1",
    "symptom:rejects_empty_sequence",
    "symptom:unexplained:*",
    "symptom:zero_values:*",
    "symptom:zeros:*",
)


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    problem: str  # "" when true


def audit(report: Mapping[str, Any], truth: Truth, identity: Mapping[str, str]) -> list[Verdict]:
    """Each claim the run prints judged; ``identity`` maps a mutant id to its mistake's primary id (the catalogue's)."""
    return judge(printed(report), report, truth, identity)


def judge(claims: list[Claim], report: Mapping[str, Any], truth: Truth, identity: Mapping[str, str]) -> list[Verdict]:
    """Each of ``claims`` (printed by any output: the console, feedback, the class report, the matrix) judged
    against the module's truth and on the cases of ``report`` (the run's JSON report) it cites."""
    cases = {c["id"]: c for c in report["cases"]}
    return [Verdict(claim, _problem(claim, truth, identity, cases)) for claim in claims]


def _problem(claim: Claim, truth: Truth, identity: Mapping[str, str], cases: Mapping[str, Any]) -> str:
    facts = truth.facts
    for rule in PRECONDITIONS:
        problem = rule(claim, facts)
        if problem:
            return problem
    counted = _counted(claim)
    if counted:
        return counted
    main = claim.ids[0]
    if any(fnmatch.fnmatchcase(main, p) for p in MEASURED):
        return _measured(claim, cases)
    ids = [*claim.ids, *(identity.get(i, "") for i in claim.ids)]
    if any(m.named_by([i for i in ids if i]) for m in truth.mistakes):
        return ""
    return f"names no recorded mistake of the module ({main})"


def _ids_rule(pattern: str, fact: str, allowed: tuple[str, ...], said: str):
    def rule(claim: Claim, facts: Facts) -> str:
        if re.search(pattern, claim.text) and getattr(facts, fact) not in allowed:
            return f"says {said}, but {fact} is {getattr(facts, fact)!r}"
        return ""

    return rule


def _before_use(claim: Claim, facts: Facts) -> str:
    found = re.search(r"should be rejected with (\w+) before it is used", claim.text)
    if found and found.group(1) in facts.own_checks:
        return f"says {found.group(1)} is not checked before use, but the code checks it (another exception)"
    return ""


def _dtype(claim: Claim, facts: Facts) -> str:
    if not claim.ids[0].startswith("symptom:dtype:"):
        return ""
    operation = claim.ids[0].split(":")[2]
    if "the values differ as well" in claim.text and operation in facts.dtype_only:
        return f"says {operation}'s values differ, but they are right once cast"
    return ""


def _declare(claim: Claim, facts: Facts) -> str:
    if "sinusoid" in facts.declares and re.search(r"declare sinusoid_convention", claim.text):
        return "advises declaring the sinusoid convention, which the module declares"
    return ""


NAN_WIDTHS = re.compile(r"D = ([\d, ]+(?: or \d+)?) gives? a table of NaN")


def _nan(claim: Claim, facts: Facts) -> str:
    found = NAN_WIDTHS.search(claim.text)
    said = re.findall(r"\d+", found.group(1)) if found else []
    wrong = [width for width in said if width not in facts.nan_widths]
    return f"says D = {', '.join(wrong)} gives a table of NaN, but nan_widths is {facts.nan_widths}" if wrong else ""


PRECONDITIONS = (
    _ids_rule(
        r"instead of id >= vocab_size|range check is off by one",
        "forward_ids",
        ("off_by_one",),
        "an off-by-one range check",
    ),
    _ids_rule(r"unchecked read outside the table", "forward_ids", ("none",), "no range check"),
    _ids_rule(
        r"exactly as in the forward", "forward_ids", ("spec", "untyped", "off_by_one"), "the forward validates ids"
    ),
    _ids_rule(r"[Bb]ackward also rejects", "backward_ids", ("spec", "untyped"), "the backward rejects ids"),
    _ids_rule(r"length check is off by one", "length_check", ("off_by_one",), "an off-by-one length check"),
    _ids_rule(r"length check leaves start_pos out", "length_check", ("ignores_start",), "a check without start_pos"),
    _before_use,
    _dtype,
    _declare,
    _nan,
)

_FRAME = re.compile(r"at (\S+:\d+) in (\S+)")
_ON = re.compile(r" on (\w+) = (\[[^\]]*\]|\S+?)(?=[;,)]|$| )")


READING = re.compile(r" \(in (\d+) of (\d+) cases\)(?:; |$)")
COUNTED = re.compile(r"\bin (\d+) of (\d+) cases\b")


def _counted(claim: Claim) -> str:
    """ "in k of n cases" is said of exactly n cases: the cases the sentence is printed for (a group's count carried
    to a subset of its cases, an item's or another student's, is untrue)."""
    for found in COUNTED.finditer(claim.text.split(HINT)[0]):
        if int(found.group(2)) != len(claim.cases):
            return f"says 'in {found.group(1)} of {found.group(2)} cases' of {len(claim.cases)} cases"
    return ""


def readings(text: str) -> list[tuple[str, int]]:
    """The readings of a title and how many of its cases each claims ("X (in 5 of 6 cases); Y (in 1 of 6 cases)")."""
    parts = READING.split(text)
    if len(parts) == 1:
        return [(text, -1)]
    return [(parts[i], int(parts[i + 1])) for i in range(0, len(parts) - 2, 3)]


def _measured(claim: Claim, cases: Mapping[str, Any]) -> str:
    """A measurement must show on every case it cites (a title of several readings: each on as many cases as it
    says): the exception and the frame, the input shown, the result."""
    for text, count in readings(claim.text.split(HINT)[0]):
        problems = [_measured_on(claim, text, case_id, cases) for case_id in claim.cases]
        true_of = sum(not p for p in problems)
        if true_of < (len(claim.cases) if count < 0 else count):
            return next(p for p in problems if p)
    return ""


def _measured_on(claim: Claim, text: str, case_id: str, cases: Mapping[str, Any]) -> str:
    """Why ``text`` (one reading of the claim) is not true of ``case_id``; "" when it is."""
    case = cases.get(case_id)
    if case is None:
        return f"cites {case_id}, which the report does not hold"
    message = str(case.get("message", ""))
    kind = claim.ids[0].split(":")
    if kind[1] == "constructor" and ", in __init__" not in message:
        return f"says a constructor raised on {case_id}, whose traceback has no __init__"
    if kind[1] not in ("untyped", "constructor", "cast_unchecked"):
        return "" if case["outcome"] == "fail" else f"says {case_id} returned a result, but it is {case['outcome']}"
    if f"raised {kind[2]}" not in message:
        return f"says {kind[2]} was raised on {case_id}, whose message does not say so"
    for frame in _FRAME.finditer(text):
        path, line = frame.group(1).rsplit(":", 1)
        if f'{path.rsplit("/", 1)[-1]}", line {line},' not in message:
            return f"cites {frame.group(1)} for {case_id}, which was not raised there"
    for shown in _ON.finditer(text):
        if f"{shown.group(1)}={shown.group(2)}".replace(" ", "") not in message.replace(" ", ""):
            return f"shows {shown.group(1)} = {shown.group(2)}, not the input of {case_id}"
    return ""


def duplicates(report: Mapping[str, Any], truth: Truth) -> list[str]:
    """Verdict entries that repeat another: the same id or title, or the same recorded mistake named twice."""
    seen: dict[str, str] = {}
    out = []
    for entry in report["verdict"].get("mistakes") or []:
        if not entry.get("id"):
            continue
        ids = [entry["id"], *entry.get("also", ())]
        keys = [f"id {entry['id']}", f"title {entry['title']}"]
        named = [n for n, m in enumerate(truth.mistakes) if m.named_by(ids)]
        keys += [f"mistake {n}" for n in named] if len(named) == 1 else []  # an entry of two mistakes repeats neither
        twice = [k for k in keys if k in seen]
        if twice:
            out.append(f"{entry['id']} repeats {seen[twice[0]]} ({twice[0]})")
        for key in keys:
            seen.setdefault(key, entry["id"])
    return out


def naming(report: Mapping[str, Any], truth: Truth) -> tuple[list[bool], list[bool]]:
    """Per mistake: named strictly by a verdict entry (by id), named at all (by id or phrase in a verdict title)."""
    entries = [m for m in report["verdict"].get("mistakes") or [] if m.get("id")]
    strict = [any(m.named_by([e["id"], *e.get("also", ())]) for e in entries) for m in truth.mistakes]
    loose = [s or any(m.phrased_in(e["title"]) for e in entries) for s, m in zip(strict, truth.mistakes)]
    return strict, loose
