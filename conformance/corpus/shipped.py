"""The SHA-256 of every fixture file this version of the suite ships with (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json``).

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

SHIPPED_SHA256: dict[str, str] = {
    "embedding_layer.yaml": "334599ef02a6e20613e1fb43070e1cfb2d69650bf57d681d2324fbffaa9987a3",
    "half_precision.yaml": "868f7d6a445dce3c79dad00d8f4a1a0cdf09ae8ec479f681064b1743818213cc",
    "learned_positions.yaml": "dd56ab393907adaa1884e2da2dfbc30597d9b848f29fc0c47c9af955803a08b8",
    "lookup_options.yaml": "2d12f0729d97f47438d3f917a76ba0b426b38efde780a32246b0b6568792ac30",
    "memory.yaml": "94aad80dd66d96bd644ad6c7427aa3c734b470de99e14cf233116f45229db756",
    "sinusoidal.yaml": "81223855059e149b2814bce8716511719278e647b05d9708d68ab96fca502aa9",
    "token_lookup.yaml": "84d24d5f921e7b522d807aa8a705f7ecc46b4b031094a92c9177938ed6caa1b8",
}


def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]
