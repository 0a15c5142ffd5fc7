"""The JSON Schemas of spec/schemas, each compiled once on first use."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from embconf.model.vocabulary import SCHEMAS_DIR


@lru_cache(maxsize=None)
def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text())


@lru_cache(maxsize=None)
def validator(name: str):
    """A Draft 2020-12 validator for ``spec/schemas/<name>.schema.json``."""
    import jsonschema  # imported here: a plain run never pays for it

    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema(name))
    return cls(schema(name), format_checker=cls.FORMAT_CHECKER)
