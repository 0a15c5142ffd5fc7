"""Mistakes of quantized tables (spec section 17): every one is killed by the quantized goldens and named first on
the cases it fails (``embconf mutants --diagnosis --area quantized``), each cites where it was found, and a mistake
of a row's layout shows in the lookup and in the bag alike."""

from __future__ import annotations

import re

import numpy as np
from helpers import assert_exit, run_cli

from embconf.mutants import catalogue, implementation


def _quantized():
    return [m for m in catalogue() if m.area == "quantized"]


def test_every_quantized_mistake_cites_its_source_and_says_the_fix():
    mutants = _quantized()
    assert len(mutants) >= 15
    for mutant in mutants:
        assert mutant.source and mutant.hint and "EMB-QNT" in mutant.hint, mutant.id


def test_every_quantized_mistake_is_killed_and_named_first():
    result = run_cli("mutants", "--diagnosis", "--area", "quantized", "--correct", "reference", timeout=600)
    assert_exit(result, 0)
    count = len(_quantized())
    assert f"kill rate 100.0% of {count} mutants" in result.stdout
    assert re.search(rf"for {count} of {count} mutants; overall (\d+) of \1 failing cases", result.stdout)
    assert "correct implementation reference: 0 failures, 0 diagnoses" in result.stdout


def test_a_layout_mistake_reads_the_lookup_and_the_bag_alike():
    from embconf.reference.quantize import quantize_table
    from embconf.reference.quantized import quantized_lookup

    table = quantize_table(np.arange(64, dtype=np.float32).reshape(2, 32) - 20, "q4_0")
    wrong = implementation("quant.q4_0.nibbles_interleaved")
    rows = wrong["quantized_lookup"](table, np.array([0, 1]), "q4_0", 32, "float32")
    bags = wrong["quantized_bag_forward"](table, np.array([0, 1]), np.array([0, 1]), "sum", "q4_0", 32)
    right = quantized_lookup(table, np.array([0, 1]), "q4_0", 32, "float32")
    assert np.array_equal(rows, bags) and not np.array_equal(rows, right)
    assert np.array_equal(rows[:, 0], right[:, 0]) and np.array_equal(rows[:, 2], right[:, 1])  # 2j reads j
