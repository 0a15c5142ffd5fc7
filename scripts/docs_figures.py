"""Regenerate the figures quoted in README.md and docs/*.md, so that none is copied by hand and none can drift.

A figure is marked in the Markdown where it appears, inline or as a block; the text between the markers is
this script's to write:

    The suite holds <!-- figure:cases -->298<!-- /figure --> golden cases.

    python scripts/docs_figures.py            # rewrite every marked figure from the suite as it is now
    python scripts/docs_figures.py --check    # exit 1 naming each figure that differs from what is committed

Every figure is computed from the installed suite (the fixtures, the spec's vocabulary, the mutant catalogue) or
from committed files (docs/matrix.json and docs/upstream-findings.yaml for docs/upstream.md, see upstream_doc.py),
fast and without any optional dependency. Figures that depend on the machine (timings, install times, the
diagnosis measured against framework adapters) are not quoted: the docs name the command that prints them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from embconf.corpus.fixtures import Corpus

ROOT = Path(__file__).resolve().parent.parent
MARKED = re.compile(r"<!-- figure:(?P<name>[a-z_]+) -->(?P<text>.*?)<!-- /figure -->", re.DOTALL)


@cache
def _corpus() -> Corpus:
    from embconf.corpus.fixtures import load_corpus

    return load_corpus()


def _cases() -> str:
    return str(len(_corpus().cases))


def _requirements() -> str:
    return str(len({req for case in _corpus().cases for req in case.requirements}))


def _spec_version() -> str:
    from embconf.model.vocabulary import spec_version

    return spec_version()


def _suite_version() -> str:
    from embconf.model.version import __version__

    return __version__


def _mutants() -> str:
    from embconf.mutants import catalogue

    return str(len(catalogue()))


def _operations() -> str:
    from embconf.model.vocabulary import operations

    return str(len(operations()))


def _protocol() -> str:
    from embconf.protocol.codec import PROTOCOL_MINOR, PROTOCOL_VERSION

    return f"version {PROTOCOL_VERSION}, minor {PROTOCOL_MINOR}"


def _students() -> str:
    return str(sum(1 for path in (ROOT / "tests" / "students").glob("*.py") if not path.name.startswith("_")))


def _fixture_table() -> str:
    """One row per fixture file: how many golden cases it holds and the requirement families they pin."""
    counts = Counter(case.source for case in _corpus().cases)
    families: dict[str, set[str]] = {}
    for case in _corpus().cases:
        families.setdefault(case.source, set()).update(req.rsplit("-", 1)[0] for req in case.requirements)
    rows = [
        f"| `fixtures/{name}` | {counts[name]} | {', '.join(sorted(families[name]))} |"
        for name in sorted(counts, key=lambda name: -counts[name])
    ]
    header = ["| fixture file | golden cases | requirement families |", "|---|---|---|"]
    return "\n" + "\n".join([*header, *rows]) + "\n"


def _failure_example() -> str:
    """What ``embconf run`` prints for the catalogue's overwrite-instead-of-accumulate mistake on one case."""
    command = [*EXAMPLE_RUN, "--no-colour"]
    done = subprocess.run([sys.executable, "-m", "embconf", *command], capture_output=True, text=True, timeout=300)
    shown = done.stdout[done.stdout.index("Verdict:") :].rstrip("\n")
    return f"\n```console\n$ embconf {' '.join(EXAMPLE_RUN)}\n...\n{shown}\n```\n"


def _rubric() -> str:
    """The default rubric's total and its items' points, read from the file the suite grades with."""
    import yaml

    rubric = yaml.safe_load((ROOT / "conformance" / "grading" / "default_rubric.yaml").read_text(encoding="utf-8"))
    items = ", ".join(f"{item['id']} {item['points']}" for item in rubric["items"])
    return f"{sum(item['points'] for item in rubric['items'])} points ({items})"


EXAMPLE_RUN = ["run", "--impl", "mutant:bwd.overwrite", "-k", "lookup.backward.module_example_020", "-q"]


def _upstream_findings() -> str:
    """docs/upstream.md's findings, each with its reproduction (refused when docs/matrix.json no longer shows it)."""
    from upstream_doc import upstream_findings

    return upstream_findings()


def _upstream_deviations() -> str:
    """docs/upstream.md's table of every deviation docs/matrix.json records."""
    from upstream_doc import upstream_deviations

    return upstream_deviations()


FIGURES: dict[str, Callable[[], str]] = {
    "cases": _cases,
    "requirements": _requirements,
    "spec_version": _spec_version,
    "suite_version": _suite_version,
    "mutants": _mutants,
    "operations": _operations,
    "protocol": _protocol,
    "students": _students,
    "fixture_table": _fixture_table,
    "failure_example": _failure_example,
    "rubric": _rubric,
    "upstream_findings": _upstream_findings,
    "upstream_deviations": _upstream_deviations,
}


def documents(root: Path) -> list[Path]:
    """The Markdown files whose figures this script writes: README.md and every docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def regenerate(text: str, values: dict[str, str], where: str) -> tuple[str, list[str]]:
    """``text`` with every marked figure rewritten, and one line per figure that changed (or is unknown)."""
    changed: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in values:
            changed.append(f"{where}: unknown figure '{name}' (known: {', '.join(sorted(values))})")
            return match[0]
        if match["text"] != values[name]:
            changed.append(
                f"{where}: figure '{name}' is {match['text'].strip()!r}, the suite says {values[name].strip()!r}"
            )
        return f"<!-- figure:{name} -->{values[name]}<!-- /figure -->"

    return MARKED.sub(fill, text), changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each stale figure")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose docs to read (default: this one)")
    args = parser.parse_args(argv)
    values = {name: compute() for name, compute in FIGURES.items()}
    problems: list[str] = []
    for path in documents(args.root):
        text = path.read_text(encoding="utf-8")
        new, changed = regenerate(text, values, str(path.relative_to(args.root)))
        problems += changed
        if not args.check and new != text:
            path.write_text(new, encoding="utf-8")
    for line in problems:
        print(line)
    if args.check and problems:
        print("run: python scripts/docs_figures.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
