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
    "bags.yaml": "8dedc47775f3b73dd82db46e8a86747185c97e6cd2df4b5e3deeb5f077fd3a85",
    "embedding_layer.yaml": "a5586520d93dc5bd04cb2869a96c65ad17c6c0f91eb4b680c7b54e15eb2cd622",
    "half_precision.yaml": "362e6c4128f5b21eacc3b6b319a354952c49f1ef03beeaed2ae9599d92d883a3",
    "learned_positions.yaml": "cafd0bbe4b6b885fac50a8619b4d404a8a17486ceb27e12201382cda5f108fb7",
    "lookup_options.yaml": "6b29cdbfd3d9f639d1ab6a1d08c55635f32a3e508a2e26379a2055f50f192b95",
    "memory.yaml": "bc2eb152bc89f0b88a4ac162e2d7555aa853cebb60e6b5df06c4e7b256394563",
    "rope.yaml": "4e3399ddf80148946ae3e6e8beef06c282b3372cb9716b20c81b9b0f176578b8",
    "sinusoidal.yaml": "a070513719ced636ebc500cab0e146d887ca5ddf410ec36cc8f6d6ba21931f13",
    "stateful.yaml": "08eb7d3b3e93c076c3cd0384f316d49f4b109b6fed38b7365cb56b909b45890f",
    "token_lookup.yaml": "1384425d468fc97e54faa56c43b9e5f191653bf7bd2b8d1e6496d5c53aa44c50",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "027f55fcce69b7cb0c562cdb54b299dcff31f20051ca2ef492b1465131f1acb5",
    "embedding_layer.json": "b993a82fc470ca9485da5659ddd3dfd2b18c85b9019f776df1259e074f7ffbc5",
    "half_precision.json": "f10b2fca905c91fa653c41fe315bdf8dd116446266c18bcf6ecb63d5b54beca1",
    "learned_positions.json": "557ab14b89cbd1c5782066974d76f2112d741f11a1fb49881b121a4aef4f8548",
    "lookup_options.json": "906b31e9c047d12ccfc72a30dc91db87e5902135b333aa9bb18d32e0c61e29c4",
    "memory.json": "8efdfb3f179c9188ac85a18299b0e13029ae55d2442b87a796a2abc09b033944",
    "rope.json": "32f251a68f00cb2a9501b54756f410b81c51ff5340fab360c93b833556c05981",
    "sinusoidal.json": "5a2b581d6a37ab06c1e468ec10742d9a64e8d7f58776b60dbc1b101ee770ccff",
    "stateful.json": "3ff210378c4235c589dfc28ec2aa2595e1a657105023677ace3367f845e3fa61",
    "token_lookup.json": "4e4ce3c2b981054f66f52f3311275572cf73e632d6dab14744a21162fd7f3c48",
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
