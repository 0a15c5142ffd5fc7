"""How well the diagnosis names the real mistakes of the held-out corpus tests/realcode/ (wrong implementations
modelled on public code, several mistakes each).

Run from the repository root, with the suite installed (``embconf`` on PATH or next to this Python):

    python scripts/measure_realcode.py [--corpus tests/realcode] [--only NAME ...] [--keep DIR] [--embconf PATH] [--all-entries]

Every module ``tests/realcode/[a-z]*.py`` is run through the CLI exactly as a user would run it,
``embconf run --impl KIND:PATH -q --report-json FILE`` (KIND is ``tinytorch`` for a module that builds on the
corpus's ``_tt`` helper, ``functions`` otherwise), one after the other. A module lists its true mistakes in
``MISTAKES = [{"phrase": ..., "mutants": [...]}, ...]`` (read with ``ast``, never imported here); a phrase is a
string, or a list of equally good phrasings. A verdict entry names a mistake when its id is one of the mistake's
mutants or its title contains a phrase (case-insensitive); a case's diagnosis names it likewise (mutant id, or a
phrase in its summary, description or alternatives).

Printed per module and in total: whether it is caught (some case fails), how many of its mistakes the verdict
names, how many some case's diagnosis names, the verdict entries that name none of its mistakes (candidate wrong
or misleading statements, for a person to review; ``--all-entries`` lists every entry with the mistake it names, since
a wrong statement can contain a phrase too) and the seconds the whole command took. From the truth audit
(``tests/realcode/_truth.py``, the one tests/diagnosis/test_realcode.py runs): whether the verdict names the
module's mistakes strictly (each by a typed id: a mutant or a recorded claim), partly, or not at all; every printed
sentence the module's recorded truth contradicts (untrue statements); and verdict entries that repeat another
(duplicates); and those figures per family (rotary, bag, lookup/sinusoid). A module listed in
``tests/realcode/_untuned.py`` is marked "held out": measured like the others, not yet asserted by the suite. The exit status is 1
only when something is broken (a module whose MISTAKES cannot be read, a run that exits 2, a missing or unreadable
report), never because a figure is low: this script measures.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from embconf.reports.json_report import read as read_report  # JSON lines since report format 2

ROOT = Path(__file__).resolve().parents[1]
FAILING = ("fail", "error", "crash", "timeout")
sys.path.insert(0, str(ROOT / "tests" / "realcode"))
from _truth import Truth, audit, duplicates, naming, read_truth  # noqa: E402  (the corpus's audit, beside it)
from _untuned import UNTUNED  # noqa: E402  (modules measured, not yet asserted by the suite)

FAMILIES = ("rotary", "bag", "lookup/sinusoid")


@dataclass(frozen=True)
class Mistake:
    phrases: tuple[str, ...]
    mutants: tuple[str, ...]

    def named_by(self, ident: str, texts: list[str]) -> bool:
        return ident in self.mutants or any(p.lower() in t.lower() for p in self.phrases for t in texts)


@dataclass
class Outcome:
    module: str
    kind: str
    mistakes: list[Mistake]
    family: str = "lookup/sinusoid"
    seconds: float = 0.0
    broken: str = ""
    failures: int = 0
    verdict_named: list[bool] = field(default_factory=list)
    diagnosis_named: list[bool] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    truth: Optional[Truth] = None
    strict: list[bool] = field(default_factory=list)  # per mistake: a verdict entry names it by a typed id
    untrue: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    @property
    def naming(self) -> str:
        """'strictly' (every mistake by a typed id), 'partly' (some), 'not'."""
        named = sum(self.strict)
        return "strictly" if named == len(self.strict) else ("partly" if named else "not")


def family_of(path: Path) -> str:
    """'rotary' for a module defining the rope functions, 'bag' for one defining a bag, else 'lookup/sinusoid'."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in ast.walk(n.targets[0]) if isinstance(t, ast.Name)
    }
    if names & {"rope_forward", "rope_tables"}:
        return "rotary"
    return "bag" if names & {"embedding_bag_forward", "EmbeddingBag"} else "lookup/sinusoid"


def read_module(path: Path) -> tuple[str, list[Mistake]]:
    """(kind, mistakes) of a corpus module, from its source alone."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    kind = "functions"
    raw: Any = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "_tt":
            kind = "tinytorch"
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MISTAKES" for t in node.targets):
            raw = ast.literal_eval(node.value)
    if not isinstance(raw, list) or not raw:
        raise ValueError("no MISTAKES list")
    mistakes = []
    for item in raw:
        phrase = item.get("phrase") if isinstance(item, dict) else None
        phrases = [phrase] if isinstance(phrase, str) else phrase
        if not isinstance(phrases, list) or not phrases or not all(isinstance(p, str) and p for p in phrases):
            raise ValueError(f"a MISTAKES entry needs a non-empty 'phrase' (a string or a list of them): {item!r}")
        mistakes.append(Mistake(tuple(phrases), tuple(item.get("mutants", ()))))
    return kind, mistakes


def embconf_command(given: str | None) -> list[str]:
    if given:
        return [given]
    beside = Path(sys.executable).with_name("embconf")
    found = str(beside) if beside.exists() else shutil.which("embconf")
    return [found] if found else [sys.executable, "-m", "embconf"]


def diagnosis_texts(entry: dict[str, Any]) -> tuple[str, list[str]]:
    ident = str(entry.get("mutant") or entry.get("symptom") or "")
    texts = [str(entry.get(k, "")) for k in ("summary", "description")]
    texts += [str(v) for v in (entry.get("alternatives") or {}).values()]
    return ident, texts


def judge(outcome: Outcome, report: dict[str, Any]) -> None:
    cases = report["cases"]
    outcome.failures = sum(c["outcome"] in FAILING for c in cases)
    verdict = report["verdict"]["mistakes"]
    outcome.verdict_named = [any(m.named_by(v["id"], [v["title"]]) for v in verdict) for m in outcome.mistakes]
    diagnoses = [diagnosis_texts(d) for c in cases for d in (c.get("diagnosis") or [])]
    outcome.diagnosis_named = [any(m.named_by(i, t) for i, t in diagnoses) for m in outcome.mistakes]
    if outcome.truth is not None:
        from embconf.mutants import registry

        identity = {key: m.mistake or key for key, m in registry().items()}
        outcome.strict = naming(report, outcome.truth)[0]
        outcome.untrue = [
            f"{v.claim.where}: {v.problem}: {v.claim.text[:160]}"
            for v in audit(report, outcome.truth, identity)
            if v.problem
        ]
        outcome.duplicates = duplicates(report, outcome.truth)
    for v in verdict:
        text = f"{v['id']}: {v['title']} ({len(v['cases'])} cases)"
        names = [m.phrases[0] for m in outcome.mistakes if m.named_by(v["id"], [v["title"]])]
        outcome.entries.append(f"[{', '.join(names) or '?'}] {text}")
        if not names:
            outcome.unmatched.append(text)


def measure(path: Path, command: list[str], reports: Path) -> Outcome:
    try:
        kind, mistakes = read_module(path)
    except (OSError, SyntaxError, ValueError) as exc:
        return Outcome(path.name, "?", [], broken=f"cannot read MISTAKES: {exc}")
    outcome = Outcome(path.name, kind, mistakes, family_of(path))
    try:
        outcome.truth = read_truth(path)
    except ValueError as exc:
        outcome.broken = f"cannot read the recorded truth: {exc}"
        return outcome
    report_path = reports / f"{path.stem}.json"
    report_path.unlink(missing_ok=True)
    argv = command + ["run", "--impl", f"{kind}:{path}", "-q", "--report-json", str(report_path)]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    outcome.seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        outcome.broken = f"embconf exited {done.returncode}: {tail[0][:200]}"
        return outcome
    try:
        report = read_report(report_path)
        judge(outcome, report)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        outcome.broken = f"report {report_path} missing or unreadable: {exc!r}"
    return outcome


def show(outcome: Outcome, all_entries: bool) -> None:
    if outcome.broken:
        print(f"{outcome.module:32} BROKEN: {outcome.broken}")
        return
    n = len(outcome.mistakes)
    caught = "caught" if outcome.failures else "NOT CAUGHT"
    held = " (held out: not yet asserted)" if Path(outcome.module).stem in UNTUNED else ""
    print(
        f"{outcome.module:32} {outcome.kind:9} {caught:10} {outcome.failures:4} failing  "
        f"verdict names {sum(outcome.verdict_named)}/{n}  diagnoses name {sum(outcome.diagnosis_named)}/{n}  "
        f"{outcome.seconds:6.1f} s{held}"
    )
    for mistake, named in zip(outcome.mistakes, outcome.verdict_named):
        if not named:
            print(
                f"    not in the verdict: {' / '.join(mistake.phrases)!r}"
                + (f" {list(mistake.mutants)}" if mistake.mutants else "")
            )
    print(
        f"    named {outcome.naming} ({sum(outcome.strict)}/{n} by typed id); untrue statements {len(outcome.untrue)}; duplicates {len(outcome.duplicates)}"
    )
    for text in outcome.untrue:
        print(f"    UNTRUE {text}")
    for text in outcome.duplicates:
        print(f"    DUPLICATE {text}")
    for text in outcome.unmatched:
        print(f"    names no true mistake: {text}")
    for text in outcome.entries if all_entries else ():
        print(f"    verdict entry {text}")


def by_family(outcomes: list[Outcome]) -> None:
    """Per family: modules caught, wrong modules named strictly / partly / not, untrue sentences, duplicates."""
    for family in FAMILIES:
        good = [o for o in outcomes if not o.broken and o.family == family]
        if not good:
            continue
        wrong = [o for o in good if o.failures]
        named = [sum(o.naming == k for o in wrong) for k in ("strictly", "partly", "not")]
        print(
            f"{family}: caught {len(wrong)} of {len(good)}; named strictly {named[0]}, partly {named[1]}, not {named[2]}; "
            f"untrue statements {sum(len(o.untrue) for o in good)}; duplicate entries "
            f"{sum(len(o.duplicates) for o in good)}"
        )


def summary(outcomes: list[Outcome], elapsed: float) -> None:
    by_family(outcomes)
    good = [o for o in outcomes if not o.broken]
    total = sum(len(o.mistakes) for o in good)
    named = sum(sum(o.verdict_named) for o in good)
    diag = sum(sum(o.diagnosis_named) for o in good)
    unmatched = sum(len(o.unmatched) for o in good)
    print()
    print(
        f"modules: {len(outcomes)} ({len(outcomes) - len(good)} broken); caught {sum(o.failures > 0 for o in good)} of {len(good)}"
    )
    if total:
        print(
            f"true mistakes: {total}; named by the verdict {named} ({100 * named / total:.1f}%); "
            f"named by some case's diagnosis {diag} ({100 * diag / total:.1f}%)"
        )
        print(f"modules whose verdict names every mistake: {sum(all(o.verdict_named) for o in good)} of {len(good)}")
    print(f"verdict entries naming no true mistake: {unmatched} in {sum(bool(o.unmatched) for o in good)} modules")
    wrong = [o for o in good if o.failures]
    print(
        "wrong modules named strictly {}, partly {}, not {} (of {}); untrue statements {}; duplicate entries {}".format(
            *(sum(o.naming == k for o in wrong) for k in ("strictly", "partly", "not")),
            len(wrong),
            sum(len(o.untrue) for o in good),
            sum(len(o.duplicates) for o in good),
        )
    )
    print(f"time: {sum(o.seconds for o in outcomes):.1f} s in embconf runs, {elapsed:.1f} s in all")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "realcode")
    parser.add_argument("--only", action="append", default=[], help="module name (stem) to run; repeatable")
    parser.add_argument("--keep", type=Path, help="write the JSON reports here (default: a temporary folder)")
    parser.add_argument("--embconf", help="the embconf executable (default: the one beside this Python, or on PATH)")
    parser.add_argument(
        "--all-entries", action="store_true", help="also list every verdict entry with the mistake it names"
    )
    args = parser.parse_args(argv)
    modules = sorted(p for p in args.corpus.resolve().glob("[a-z]*.py") if not args.only or p.stem in args.only)
    if not modules:
        print(f"no corpus modules in {args.corpus}", file=sys.stderr)
        return 1
    command = embconf_command(args.embconf)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="realcode-") as scratch:
        reports = args.keep or Path(scratch)
        reports.mkdir(parents=True, exist_ok=True)
        outcomes = []
        for path in modules:
            outcomes.append(measure(path, command, reports))
            show(outcomes[-1], args.all_entries)
    summary(outcomes, time.perf_counter() - started)
    return 1 if any(o.broken for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
