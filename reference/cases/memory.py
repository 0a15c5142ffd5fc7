"""Memory arithmetic cases: parameter counts, table bytes, gradient bytes, Adam state, on real model tables."""
from __future__ import annotations

import numpy as np

from embconf.model.rope import LAYER_FEATURE, LAYER_REFUSED_FEATURE
from embconf.reference.cases import CaseSpec, token_ids
from embconf.reference.cases.domains import case_at  # a case at named boundaries of the inputs' domains

AREA = "memory"

STORED, COMPUTED = ("sinusoid_stored",), ("sinusoid_computed",)  # how a sinusoidal layer keeps its table (EMB-MEM-1)
DTYPES = ("float32", "float16", "bfloat16", "float64", "int8")

# (slug, name, vocab_size, embed_dim, position table length, pos_encoding): published model configurations.
MODELS = (
    ("bert_base", "BERT-base", 30522, 768, 512, "learned"),
    ("gpt2_small", "GPT-2 small", 50257, 768, 1024, "learned"),
    ("gpt3", "GPT-3 175B", 50257, 12288, 2048, "learned"),
    ("llama2_7b", "Llama-2-7B (rotary positions: no table)", 32000, 4096, 4096, "none"),
    ("llama3_8b", "Llama-3-8B (rotary positions: no table)", 128256, 4096, 8192, "none"),
    ("gemma2_2b", "Gemma-2-2B (rotary positions: no table)", 256000, 2304, 8192, "none"),
)


NOTES = {("gpt3", "float32"): " 2,470,232,064 bytes: the module's '2.3 GB', which is 2.30 GiB (2355.8 MiB, 2470.2 MB)."}


def _table_bytes_cases() -> list[CaseSpec]:
    specs = [CaseSpec(f"mem.table_bytes.{slug}.{dtype}",
                      f"{name} token table {vocab} x {dim} in {dtype}: exact bytes, MB (10^6) and MiB (2^20)." + NOTES.get((slug, dtype), ""),
                      ("EMB-MEM-2", "EMB-MEM-3"), "table_bytes", {"num_rows": vocab, "embed_dim": dim, "dtype": dtype})
             for slug, name, vocab, dim, _, _ in MODELS for dtype in DTYPES]
    specs += [
        case_at("table_bytes", {"num_rows": "one", "embed_dim": "one", "dtype": "int8"}, "mem.table_bytes.one_int8", "One int8 element: 1 byte.", ("EMB-MEM-2",)),
        CaseSpec("mem.table_bytes.positions_512x768", "A learned 512 x 768 position table in float32.", ("EMB-MEM-2", "EMB-MEM-3"), "table_bytes", {"num_rows": 512, "embed_dim": 768, "dtype": "float32"}),
        CaseSpec("mem.table_bytes.one_mib", "256 x 1024 float32 is exactly 1 MiB and 1.048576 MB.", ("EMB-MEM-3",), "table_bytes", {"num_rows": 256, "embed_dim": 1024, "dtype": "float32"}),
        case_at("table_bytes", {"dtype": "unknown"}, "mem.error.unknown_dtype", "dtype 'float8' is not in the spec's list: invalid_config.", ("EMB-MEM-6", "EMB-ERR-1"), num_rows=4, embed_dim=4),
        CaseSpec("mem.error.parameters_unknown_pos", "Parameters of a layer with pos_encoding 'rope': invalid_config, not a count without positions.", ("EMB-LAY-7", "EMB-MEM-1", "EMB-ERR-1"),
                 "parameter_count", {"config": {"vocab_size": 100, "embed_dim": 16, "pos_encoding": "rope"}}, (LAYER_REFUSED_FEATURE,), error="invalid_config"),
        CaseSpec("mem.parameters.rope", "A rope layer (1.3.0): V * D trainable, no position table, nothing non-trainable.", ("EMB-LAY-10", "EMB-MEM-1"),
                 "parameter_count", {"config": {"vocab_size": 100, "embed_dim": 16, "max_seq_len": 2048, "pos_encoding": "rope"}}, (LAYER_FEATURE,)),
        CaseSpec("mem.error.adam_unknown_dtype", "Adam state of an unknown dtype 'int4': invalid_config.", ("EMB-MEM-6", "EMB-ERR-1"), "adam_state_bytes", {"num_params": 10, "dtype": "int4"}, error="invalid_config"),
    ]
    return specs


def _parameter_count_cases() -> list[CaseSpec]:
    specs = []
    for pos in ("learned", "sinusoidal", "none"):
        config = {"vocab_size": 100, "embed_dim": 16, "max_seq_len": 32, "pos_encoding": pos, "scale_embeddings": False}
        specs.append(CaseSpec(f"mem.parameters.small_{pos}", f"A 100 x 16 layer with {pos} positions over 32 positions: trainable vs stored constants.",
                              ("EMB-MEM-1",), "parameter_count", {"config": config}, STORED if pos == "sinusoidal" else ()))
    specs.append(CaseSpec("mem.parameters.defaults", "Defaults: a 512-row learned table is trainable too.", ("EMB-MEM-1", "EMB-LAY-1"),
                          "parameter_count", {"config": {"vocab_size": 1000, "embed_dim": 64}}))
    specs.append(CaseSpec("mem.parameters.scaled_sinusoidal", "Scaling adds no parameters; the sinusoidal table is not trainable.", ("EMB-MEM-1",),
                          "parameter_count", {"config": {"vocab_size": 50, "embed_dim": 8, "max_seq_len": 100, "pos_encoding": "sinusoidal", "scale_embeddings": True}}, STORED))
    for slug, name, vocab, dim, max_len, pos in MODELS:
        config = {"vocab_size": vocab, "embed_dim": dim, "max_seq_len": max_len, "pos_encoding": pos, "scale_embeddings": False}
        specs.append(CaseSpec(f"mem.parameters.{slug}", f"{name}: {vocab} x {dim} tokens, {pos} positions ({max_len}).",
                              ("EMB-MEM-1",), "parameter_count", {"config": config}, ("large_tables",)))
    specs.append(CaseSpec("mem.parameters.bert_base_sinusoidal", "BERT-base's sizes with sinusoidal positions: 512 x 768 stored, not trained.",
                          ("EMB-MEM-1",), "parameter_count", {"config": {"vocab_size": 30522, "embed_dim": 768, "max_seq_len": 512, "pos_encoding": "sinusoidal"}}, ("large_tables",) + STORED))
    return specs + _computed_sinusoid_cases(specs)


def _computed_sinusoid_cases(specs: list[CaseSpec]) -> list[CaseSpec]:
    """The same sinusoidal layers for an implementation that computes positions on every call (1.1.0): nothing stored."""
    return [CaseSpec(spec.id + "_computed", spec.description.split(":")[0].rstrip(".") + ", positions computed on every call: 0 non-trainable values.",
                     spec.requirements, spec.operation, spec.inputs, tuple(f for f in spec.features if f != STORED[0]) + COMPUTED)
            for spec in specs if STORED[0] in spec.features]


def _gradient_cases() -> list[CaseSpec]:
    return [
        CaseSpec("mem.gradient.module_example", "ids [2, 0, 2] on a 4 x 3 float32 table: 48 dense bytes, 2 rows sparse.", ("EMB-MEM-4",), "gradient_bytes",
                 {"vocab_size": 4, "embed_dim": 3, "dtype": "float32", "ids": np.array([2, 0, 2], np.int64)}),
        CaseSpec("mem.gradient.gpt2_batch", "GPT-2 small, a (8, 128) batch: a few thousand rows against 50257.", ("EMB-MEM-4",), "gradient_bytes",
                 {"vocab_size": 50257, "embed_dim": 768, "dtype": "float32", "ids": token_ids("mem.gradient.gpt2_batch", 50257, (8, 128))}),
        CaseSpec("mem.gradient.bert_bfloat16", "BERT-base in bfloat16, a (4, 64) batch.", ("EMB-MEM-4",), "gradient_bytes",
                 {"vocab_size": 30522, "embed_dim": 768, "dtype": "bfloat16", "ids": token_ids("mem.gradient.bert_bfloat16", 30522, (4, 64))}),
        CaseSpec("mem.gradient.all_equal_float16", "One id repeated: one sparse row, float16.", ("EMB-MEM-4",), "gradient_bytes",
                 {"vocab_size": 1000, "embed_dim": 64, "dtype": "float16", "ids": np.full((16,), 7, np.int64)}),
        CaseSpec("mem.gradient.empty_ids", "No ids: zero sparse bytes, the dense gradient still holds the table.", ("EMB-MEM-4",), "gradient_bytes",
                 {"vocab_size": 10, "embed_dim": 4, "dtype": "float64", "ids": np.zeros((0,), np.int64)}),
    ]


def _adam_cases() -> list[CaseSpec]:
    return [
        CaseSpec("mem.adam.gpt3_float32", "Adam on GPT-3's token table: two float32 moments of 617,558,016 elements.", ("EMB-MEM-5",), "adam_state_bytes",
                 {"num_params": 50257 * 12288, "dtype": "float32"}),
        CaseSpec("mem.adam.bert_base_float32", "Adam on BERT-base's token table in float32.", ("EMB-MEM-5",), "adam_state_bytes",
                 {"num_params": 30522 * 768, "dtype": "float32"}),
        CaseSpec("mem.adam.small_float16", "Adam moments in float16 for 1000 parameters.", ("EMB-MEM-5",), "adam_state_bytes", {"num_params": 1000, "dtype": "float16"}),
        CaseSpec("mem.adam.gemma_bfloat16", "Adam moments in bfloat16 for Gemma-2-2B's table.", ("EMB-MEM-5",), "adam_state_bytes", {"num_params": 256000 * 2304, "dtype": "bfloat16"}),
    ]


def cases() -> list[CaseSpec]:
    return _table_bytes_cases() + _parameter_count_cases() + _gradient_cases() + _adam_cases()
