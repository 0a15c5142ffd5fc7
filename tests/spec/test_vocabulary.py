"""The spec's structure is data (spec/vocabulary.json) read in one place; here it is held to SPEC.md:
every requirement family has an area and a section, titles and subjects are SPEC.md's, and every
requirement SPEC.md defines is in the section its family names."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

from embconf.model import vocabulary as v

SPEC = (ROOT / "spec" / "SPEC.md").read_text(encoding="utf-8")


def _defined_by_section() -> dict[str, int]:
    """Requirement id -> the number of the SPEC.md section whose text defines it (in bold)."""
    found, section = {}, None
    for line in SPEC.splitlines():
        heading = re.match(r"^## (\d+)\. ", line)
        if heading or line.startswith("## "):
            section = int(heading.group(1)) if heading else None
        for req in re.findall(r"\*\*(EMB-[A-Z]+-[A-Z]?\d+)\*\*", line):
            if section is not None:
                found.setdefault(req, section)
    return found


def test_every_family_in_the_spec_has_an_area_and_a_section():
    families = {req.split("-")[1] for req in re.findall(r"\bEMB-[A-Z]+-[A-Z]?\d+\b", SPEC)}
    known = v.requirement_families()
    assert sorted(families - set(known)) == []
    for family, entry in known.items():
        assert entry["area"] in v.areas(), family
        assert entry["section"] in v.sections(), family


def test_sections_are_the_specs_headings():
    assert v.sections() == {int(n): title.strip() for n, title in re.findall(r"^## (\d+)\. (.+)$", SPEC, re.M)}


def test_requirements_are_appendix_b_and_defined_in_their_familys_section():
    appendix = dict(re.findall(r"^\| (EMB-[A-Z]+-[A-Z]?\d+) \| ([^|]+?) \|", SPEC, re.M))
    assert v.requirement_subjects() == appendix
    defined = _defined_by_section()
    assert set(defined) == set(appendix)
    assert {req: sec for req, sec in defined.items() if v.section_of(req) != sec} == {}


def test_areas_are_the_fixture_files_and_every_operation_has_one():
    files = {entry["fixture_file"] for entry in v.areas().values() if entry["fixture_file"]}
    assert files == {p.name for p in (ROOT / "fixtures").glob("*.yaml")}
    assert {op: entry["area"] for op, entry in v.operations().items() if entry["area"] not in v.areas()} == {}


@pytest.mark.parametrize(
    "req, expected", [("EMB-FWD-2", "EMB-BWD-1"), ("EMB-SIN-5", "EMB-SIN-V1"), ("EMB-TOL-2", "EMB-PAD-1")]
)
def test_requirement_order_follows_the_spec(req, expected):
    assert v.requirement_order(req) < v.requirement_order(expected)


def test_an_unknown_family_has_no_section():
    with pytest.raises(KeyError):
        v.section_of("EMB-XYZ-1")
