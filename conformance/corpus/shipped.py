"""The SHA-256 of every fixture file this version of the suite ships with (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json``).

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

SHIPPED_SHA256: dict[str, str] = {
    "embedding_layer.yaml": "a1042c17a2d2f2f78149b6f5b4a32380dde81017afd2fd3ce4fa7ee783ae3d92",
    "half_precision.yaml": "a7f897ebe84676974b6c7699008922bd9ce9f3db2a68271c29c42be948dc6fc9",
    "learned_positions.yaml": "f4dd6670a81c5ed320726ae879598a0ffe3c58396a24b32f6f28f8f6138c604b",
    "lookup_options.yaml": "952c3c462637e75b719a59e7bb158e8b0e586bb852830565576d965df744ecf6",
    "memory.yaml": "b84b5429399afe3596dd1914b3d56cef3298069acd3e2776669d705ba4c78a46",
    "sinusoidal.yaml": "b87108a42dce0a3139754b08b37881013c0222f0a0905ef477fbd91e6899441c",
    "token_lookup.yaml": "b59ba82a043d2392f3ff066296736f61d8d74266886823ecc88a88737ae9503a",
}


def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]
