"""Where the spec's data lives, and its vocabulary (spec/vocabulary.json), loaded once."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any


def _data_dir(name: str) -> Path:
    """``spec/`` or ``fixtures/``: beside this package in a checkout, ``embconf/<name>_data`` in a wheel."""
    here = Path(__file__).resolve().parent.parent  # the embconf package
    for candidate in (here.parent / name, here / f"{name}_data"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name}/ directory next to {here}")


SPEC_DIR = _data_dir("spec")
FIXTURES_DIR = _data_dir("fixtures")
SCHEMAS_DIR = SPEC_DIR / "schemas"


def json_name(fixture_name: str) -> str:
    """The name of a fixture file's JSON form (``token_lookup.yaml``: ``token_lookup.json``)."""
    return fixture_name.removesuffix(".yaml") + ".json"


@lru_cache(maxsize=None)
def vocabulary() -> dict[str, Any]:
    return json.loads((SPEC_DIR / "vocabulary.json").read_text())


def spec_version() -> str:
    return vocabulary()["spec_version"]


def operations() -> dict[str, Any]:
    return vocabulary()["operations"]


def output_names(operation: str) -> list[str]:
    return operations()[operation]["outputs"]


def error_kinds() -> list[str]:
    return list(vocabulary()["error_kinds"])


def features() -> dict[str, str]:
    return vocabulary()["features"]


def named_outputs(operation: str, result: Any) -> dict[str, Any]:
    """A Python result (a bare value, a tuple in the spec's order, or a dict) as {output name: value}.

    Raises ValueError when the result does not have the operation's outputs.
    """
    names = output_names(operation)
    if isinstance(result, dict):
        missing = [name for name in names if name not in result]
        if missing:
            raise ValueError(f"result lacks output(s) {missing}; {operation} returns {names}")
        return {name: result[name] for name in names}
    values = result if isinstance(result, tuple) and len(names) > 1 else (result,)
    if len(values) != len(names):
        raise ValueError(f"{operation} returns {len(names)} outputs {names}, got {len(values)}")
    return dict(zip(names, values))


def optional_inputs(operation: str) -> dict[str, str]:
    """{input name: the feature a case needs to carry it} (spec 1.1: padding_idx, scale_grad_by_freq)."""
    return dict(operations()[operation].get("optional_inputs", {}))


def input_names(operation: str) -> list[str]:
    """Every input an operation may receive: its inputs, then its optional inputs."""
    return operations()[operation]["inputs"] + list(optional_inputs(operation))


# ----- the spec's structure: areas, sections, requirement families ------------------------------------


def areas() -> dict[str, dict[str, Any]]:
    """The spec's areas in spec order: {area: {"title", "fixture_file"}} (an area is one fixture file, or ``general``)."""
    return vocabulary()["areas"]


def operation_area(operation: str) -> str:
    return operations()[operation]["area"]


def sections() -> dict[int, str]:
    """The spec's numbered sections: {number: title}."""
    return {section["number"]: section["title"] for section in vocabulary()["sections"]}


def requirement_families() -> dict[str, dict[str, Any]]:
    """{family: {"section", "area", "title"}} in spec order (``FWD`` of ``EMB-FWD-2``)."""
    return vocabulary()["requirement_families"]


def requirement_subjects() -> dict[str, str]:
    """{requirement id: its subject} (SPEC.md Appendix B)."""
    return vocabulary()["requirements"]


def family_of(requirement: str) -> str:
    """``FWD`` for ``EMB-FWD-2``."""
    return (requirement.split("-") + ["", ""])[1]


def section_of(requirement: str) -> int:
    """The spec section a requirement belongs to; KeyError for a family the vocabulary does not know."""
    return requirement_families()[family_of(requirement)]["section"]


def area_of(requirement: str) -> str:
    return requirement_families()[family_of(requirement)]["area"]


def requirement_order(requirement: str) -> tuple[Any, ...]:
    """Spec order: families as the spec's sections run, numbered rules before named profiles (SIN-V1).
    A family the vocabulary does not know sorts last."""
    _, family, number = (requirement.split("-", 2) + ["", ""])[:3]
    families = list(requirement_families())
    rank = families.index(family) if family in families else len(families)
    return (rank, family, not number.isdigit(), int(number) if number.isdigit() else 0, number)


def requirement_text(requirement: str) -> str:
    """The normative paragraph of ``requirement`` in SPEC.md (the rule and why), on one line; "" when absent."""
    marker = f"**{requirement}**"
    lines = (SPEC_DIR / "SPEC.md").read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(marker)), None)
    if start is None:
        return ""
    paragraph: list[str] = []
    for line in lines[start:]:
        if not line.strip() or (paragraph and line.startswith("**EMB-")):
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)[len(marker) :].strip()
