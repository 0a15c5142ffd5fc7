"""The SHA-256 of every fixture file this version of the suite ships with, and of its JSON form (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json`` and the forms), and reading a shipped file
from its JSON form.

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from embconf.model.vocabulary import json_name
from embconf.untrusted.read import InputError, read_bounded

SHIPPED_SHA256: dict[str, str] = {
    "embedding_layer.yaml": "73365d38a605174d1aa593928fcde77e436c71878a5afeda897ce68be9bf2cb2",
    "half_precision.yaml": "8754e02548bbc0a8cb940afe711b0c436ade4cc3c1911534dcd598ab5ca50495",
    "learned_positions.yaml": "db1b26c2a5becfdaae26813cea62070f5c2f9391c4c38ae113139f1fddcf9d65",
    "lookup_options.yaml": "acdfe3be8d86ff4cf6fdd1df29d3351f7ec1c67b3ad1750bab41b913ecd81612",
    "memory.yaml": "e5b51f7914b665c1a9d2ce422c3afd1b2bb4e0a706875c720d7b20b86787794a",
    "rope.yaml": "8cb0665a755c3c9cfb3ebe94a691c3db2dc9e1b84c83e65b130ee8f266efaf4d",
    "sinusoidal.yaml": "a7f5be8a32a76ad1c1a114267c7cca33c9f125f42655b068847eddc047af876c",
    "stateful.yaml": "db8851ad18de7538755836e397e982f1429191e9d9700b1fb134a809c7edeeed",
    "token_lookup.yaml": "8091e50a613e34f8a83ef6c1b7abc37e6529f698a32886f96ab790c85e716ee1",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "embedding_layer.json": "fcdaf18f60be6b97fca1763d4c46a3f0196efccb2452c91f2e44a93f33545b8e",
    "half_precision.json": "261c086f9f9f81ab25eca769b0d7bdd160cca8becd57be6b8e1dd224d71b1eec",
    "learned_positions.json": "c569975ba3f8e8b4d791c00e58f51683ee8cf3581180eaaab5e0a68023ced426",
    "lookup_options.json": "f56a80eeae8311433f66776cee23895e70fba0edba9f8d6b2801ee2060821642",
    "memory.json": "9213472506300b874f207d0cccc2565ac4ebce2e3389067eceac74ce222dac65",
    "rope.json": "f5df6819c26a5c1d0d277d2b9a2ac32a90da9f80e26b95eb49f05a56af316242",
    "sinusoidal.json": "7c32a432f2b656b4bfb97600384fc2511816054796efdc824249c10d8e7ec52f",
    "stateful.json": "f9015cc2eabd55bc3a1d5caf8ece2cae675c396bfc8030906aa7405f360514df",
    "token_lookup.json": "9462e0aee13831cb8c589fd74be94f53f931e8bbaf029e6b5ad11ba49cab9e40",
}


def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]


def shipped_json_form(directory: Path, name: str, sha256: str, limit: int) -> Optional[Any]:
    """The document of the fixture file ``name`` (whose bytes hash to ``sha256``) read from its JSON form
    (``<area>.json``, written with it by ``embconf regenerate``: the same document, read four times faster)
    when both are exactly as this suite shipped them; else None, and the YAML file is read. A form missing,
    modified, larger than ``limit`` bytes or unreadable changes nothing but the time taken."""
    form = json_name(name)
    if sha256 != SHIPPED_SHA256.get(name) or form not in SHIPPED_JSON_SHA256:
        return None
    try:
        raw = read_bounded(directory / form, limit, "fixture file")
        return json.loads(raw) if hashlib.sha256(raw).hexdigest() == SHIPPED_JSON_SHA256[form] else None
    except (OSError, InputError, ValueError, RecursionError):
        return None
