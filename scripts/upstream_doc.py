"""The figures of docs/upstream.md: what the suite found in shipped implementations, from docs/matrix.json and the
reproductions in docs/upstream-findings.yaml (``scripts/docs_figures.py`` writes them; ``--check`` refuses drift).

- :func:`findings_markdown`: one section per finding of the data file, with the version the matrix measured, the
  requirements the matrix's deviation names, the cases, why it matters and the reproduction. A finding whose
  column is in docs/matrix.json but does not record every one of its cases as failing is refused
  (:class:`StaleFinding`): the matrix no longer shows it, so the page must not claim it. A finding on an input no
  golden case holds yet (no ``cases``) names the requirements it breaks itself and says that no golden shows it.
- :func:`deviations_markdown`: every deviation docs/matrix.json records, column by column, marked documented (the
  framework documents it as its design) or not, and naming the finding that reproduces it, if any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import yaml

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "docs" / "matrix.json"
FINDINGS = ROOT / "docs" / "upstream-findings.yaml"


class StaleFinding(ValueError):
    """A finding that docs/matrix.json does not (or no longer) records."""


@dataclass(frozen=True)
class Finding:
    id: str
    impl: str  # the matrix column
    module: str  # what the reproduction imports
    cases: tuple[str, ...]
    title: str
    why: str
    code: str
    version: str = ""  # measured, for a column not yet in docs/matrix.json
    requirements: tuple[str, ...] = ()  # what it breaks, for a finding no golden case shows yet (no cases)


def load_findings(path: Path = FINDINGS) -> list[Finding]:
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["findings"]
    findings = [
        Finding(**{**entry, "cases": tuple(entry["cases"]), "requirements": tuple(entry.get("requirements", ()))})
        for entry in entries
    ]
    for finding in findings:
        if not finding.cases and not finding.requirements:
            raise ValueError(f"{finding.id}: a finding with no golden case names the requirements it breaks")
    return findings


def load_matrix(path: Path = MATRIX) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _columns(matrix: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {column["impl"]: column for column in matrix["implementations"]}


def _requirements(column: dict[str, Any], cases: tuple[str, ...]) -> list[str]:
    """The requirement ids of the column's deviations that concern these cases."""
    found = {req for d in column["deviations"] if set(d["cases"]) & set(cases) for req in d["requirements"]}
    return sorted(found)


def _anchor(finding: Finding) -> str:
    return finding.id


def findings_markdown(matrix: dict[str, Any], findings: list[Finding]) -> str:
    """Each finding as a section: version, requirements, cases, why it matters, the reproduction."""
    columns, parts = _columns(matrix), []
    for finding in findings:
        column: Optional[dict[str, Any]] = columns.get(finding.impl)
        cases = ", ".join(f"`{case}`" for case in finding.cases)
        if not finding.cases:  # an input no golden holds yet: nothing of the matrix to check it against
            version = column["version"] if column is not None else finding.version
            requirements, cases = ", ".join(finding.requirements), "none yet: no golden case holds this input"
            measured = f"`{finding.impl}`, reproduced outside the matrix"
        elif column is not None:
            failing = {case["id"] for case in column["failing"]}
            missing = [case for case in finding.cases if case not in failing]
            if missing:
                raise StaleFinding(
                    f"{finding.id}: docs/matrix.json's column {finding.impl!r} does not record {', '.join(missing)} "
                    "as failing; fix or drop the finding in docs/upstream-findings.yaml"
                )
            version, requirements = column["version"], ", ".join(_requirements(column, finding.cases))
            measured = f"`{finding.impl}` column of [the matrix](matrix.md)"
        else:
            version, requirements = finding.version, "see the cases"
            measured = f"`{finding.impl}` (measured with `embconf matrix`; not yet in docs/matrix.json)"
        parts.append(
            f'\n### <a id="{_anchor(finding)}"></a>{finding.impl} {version}: {finding.title}\n\n'
            f"- Breaks: {requirements} (cases {cases}; {measured}).\n"
            f"- Why it matters: {finding.why}\n\n"
            f"```python\n{finding.code}```\n"
        )
    return "".join(parts) + "\n"


def deviations_markdown(matrix: dict[str, Any], findings: list[Finding]) -> str:
    """Every deviation the matrix records: column, what it does, requirements, cases, documented, reproduction."""
    rows = [
        "",
        "| column | what it does | requirements | cases | documented | reproduction |",
        "|---|---|---|---|---|---|",
    ]
    for column in matrix["implementations"]:
        for deviation in column["deviations"]:
            shown = [f for f in findings if f.impl == column["impl"] and set(f.cases) & set(deviation["cases"])]
            what = deviation["summary"].split(" -> ")[0].replace("|", "\\|").replace("\n", " ")
            rows.append(
                f"| `{column['impl']}` {column.get('version', '')} | {what} | {', '.join(deviation['requirements'])} "
                f"| {len(deviation['cases'])} | {'yes' if deviation['documented'] else 'no'} "
                f"| {', '.join(f'[{f.id}](#{_anchor(f)})' for f in shown) or '-'} |"
            )
    return "\n".join(rows) + "\n\n"


def upstream_findings() -> str:
    return findings_markdown(load_matrix(), load_findings())


def upstream_deviations() -> str:
    return deviations_markdown(load_matrix(), load_findings())
