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
    "bags.yaml": "1b6985a91960ad83f02ad4e1ae5dd71d75c5cf3724538490daeb210e1c505b33",
    "embedding_layer.yaml": "7d8f61fe338a4ce77bfdbc3f5be7d449ebf74c9f3806bc311f3027f9e5011ee4",
    "half_precision.yaml": "362e6c4128f5b21eacc3b6b319a354952c49f1ef03beeaed2ae9599d92d883a3",
    "learned_positions.yaml": "68f6277ab3027d3d8eebdfd93e1645994eb81aa27865ba6bbc7eb53f3f8176d7",
    "lookup_options.yaml": "6b29cdbfd3d9f639d1ab6a1d08c55635f32a3e508a2e26379a2055f50f192b95",
    "memory.yaml": "8391cb0fe7388b63972683db2ea7e360c6e7a42bb8db85bf45767c9e412077ee",
    "quantized.yaml": "26e85ec8d6d6573063f9591626d017666fa5c58ca35c4b921deb4cd640b113de",
    "rope.yaml": "49efe7edd7a409aa49c108a6cf780ebe837dfe53668f42bc6fe14824d3f5ba8e",
    "sinusoidal.yaml": "c0e3490e255249864179e6a4181609bfcaf606e162a36b970746687bf593914f",
    "stateful.yaml": "08eb7d3b3e93c076c3cd0384f316d49f4b109b6fed38b7365cb56b909b45890f",
    "token_lookup.yaml": "ce28c66729f0d229188f2a50da78c1020ff1e0d79a1f24ab9d839b9333773695",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "88f077faa3f9518073e973c038549f420fed7cfc1d50eebbf17d6872bada4789",
    "embedding_layer.json": "1e41a84bc80738d1d27193c15c516f36fe023d5c8a9cc1779346a0ff07ad4ad1",
    "half_precision.json": "f10b2fca905c91fa653c41fe315bdf8dd116446266c18bcf6ecb63d5b54beca1",
    "learned_positions.json": "2804c82284dc86c7794378d41e4b6e828349299779ae80a718d735f3be76dbd1",
    "lookup_options.json": "906b31e9c047d12ccfc72a30dc91db87e5902135b333aa9bb18d32e0c61e29c4",
    "memory.json": "08517d8ec2681036cfc8b2d406997e40967118c4fb72ac48212705e6f79a9746",
    "quantized.json": "94900c303e053a4560eb73bdcbb916e9ac76272a6f69eb222775ccf8ab3fd8cb",
    "rope.json": "405cacefeae2e47fa2f27fb6c65d9d2ea2d2146cee7114829d4fcf685bd83dba",
    "sinusoidal.json": "3dc1bb694cf8da59e9619f64129b016e37f2905afadd1785f24778f9a1169722",
    "stateful.json": "3ff210378c4235c589dfc28ec2aa2595e1a657105023677ace3367f845e3fa61",
    "token_lookup.json": "a00e05fb5a1c5a63d6030098212ccc5b6c7c4f6758afb25b66e1666d69938072",
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
