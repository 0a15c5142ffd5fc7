"""The JSON form of each fixture file (``<area>.json``, written by ``embconf regenerate`` beside it): the same
document, read instead of the YAML file only when both are exactly as this suite shipped them, so that a form
missing, modified or left behind by a hand-edited YAML file changes nothing but the time a run takes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers import assert_exit, identical, run_cli

import embconf.corpus.fixtures as fixtures
from embconf.corpus.fixtures import load_corpus
from embconf.corpus.shipped import SHIPPED_JSON_SHA256
from embconf.model.vocabulary import FIXTURES_DIR, json_name
from embconf.untrusted.read import read_yaml_events

YAML_FILES = sorted(FIXTURES_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: Path(p).name)
def test_each_json_form_holds_the_document_its_yaml_file_holds(path):
    """Values, types, key order and float bits, as a YAML reader reads the file."""
    form = json.loads(path.with_suffix(".json").read_bytes())
    assert identical(form, read_yaml_events(path.read_bytes(), path.name))


def test_the_shipped_hashes_of_the_json_forms_are_the_files():
    """After a deliberate `embconf regenerate`, run scripts/record_shipped_hashes.py."""
    assert SHIPPED_JSON_SHA256 == {
        json_name(path.name): hashlib.sha256(path.with_suffix(".json").read_bytes()).hexdigest() for path in YAML_FILES
    }


@pytest.fixture
def yaml_reads(monkeypatch):
    """The names of the fixture files a load reads from YAML (the rest came from their JSON forms)."""
    read: list[str] = []
    original = fixtures.parse_yaml
    monkeypatch.setattr(fixtures, "parse_yaml", lambda path, raw: (read.append(path.name), original(path, raw))[1])
    return read


def _ids(directory: Path, **options: bool) -> list[tuple[str, str]]:
    return [
        (case.id, json.dumps([case.description, case.raw_inputs, case.raw_expected], sort_keys=True))
        for case in load_corpus(directory, **options).cases
    ]


def test_the_shipped_corpus_is_read_from_its_json_forms(yaml_reads):
    assert len(load_corpus().cases) >= 400 and yaml_reads == []


def test_a_json_form_missing_modified_or_unreadable_leaves_its_yaml_file_read(tmp_path, yaml_reads):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    whole = _ids(FIXTURES_DIR)
    (copy / "memory.json").unlink()
    edited = copy / "rope.json"
    edited.write_text(edited.read_text().replace('"rope.', '"ROPE.', 1))
    (copy / "token_lookup.json").write_text("[" * 100_000)
    yaml_reads.clear()
    assert _ids(copy) == whole
    assert sorted(yaml_reads) == ["memory.yaml", "rope.yaml", "token_lookup.yaml"]


def test_a_hand_edited_yaml_file_is_read_though_its_json_form_is_intact(tmp_path, yaml_reads):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    path = copy / "memory.yaml"
    path.write_text(path.read_text().replace("BERT-base token table", "BERT token table", 1))
    corpus = load_corpus(copy, allow_modified=True)
    assert "memory.yaml" in yaml_reads and corpus.modified_files == ["memory.yaml"]
    assert any("BERT token table" in case.description for case in corpus.cases)


def test_regenerate_check_names_a_json_form_that_differs_or_is_not_the_generator_s(tmp_path):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    edited = copy / "memory.json"
    edited.write_text(edited.read_text().replace("BERT-base token table", "BERT token table", 1))
    (copy / "stray.json").write_text("{}\n")
    result = run_cli("regenerate", "--check", "--fixtures", str(copy))
    assert_exit(result, 1)
    assert "memory.json: differs" in result.stderr and "stray.json: not produced by the generator" in result.stderr
