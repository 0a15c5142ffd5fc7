"""Sinusoidal table cases: the canonical interleaved table, and the named non-canonical profiles (points of
the sinusoid family, EMB-SIN-6)."""
from __future__ import annotations

from embconf.reference.cases import CaseSpec

AREA = "sinusoidal"

FULL_ROWS_LIMIT = 4096  # tables with more elements than this pin sampled rows only


def sampled_rows(max_len: int) -> list[int]:
    """First rows, the edges of every power of two, and the last rows: where float errors and bugs show."""
    rows = set(range(min(max_len, 8)))
    power = 16
    while power <= max_len:
        rows.update({power - 1, power} & set(range(max_len)))
        power *= 2
    rows.update(range(0, max_len, max(max_len // 32, 1)))
    rows.update(range(max(max_len - 4, 0), max_len))
    return sorted(rows)


def _table(case_id: str, description: str, reqs: tuple[str, ...], max_len: int, dim: int,
           dtype: str = "float32", features: tuple[str, ...] = (), error: str | None = None) -> CaseSpec:
    sample = {"table": sampled_rows(max_len)} if max_len * dim > FULL_ROWS_LIMIT else {}
    return CaseSpec(case_id, description, reqs, "sinusoidal_table",
                    {"max_len": max_len, "embed_dim": dim, "dtype": dtype}, features, error=error, sample_rows=sample)


def canonical_cases() -> list[CaseSpec]:
    base = ("EMB-SIN-1", "EMB-SIN-2")
    odd = base + ("EMB-SIN-3",)
    long = base + ("EMB-SIN-5",)
    return [
        _table("sin.canonical.l1_d4", "A single position: row 0 is [0, 1, 0, 1] (sin 0, cos 0).", base, 1, 4),
        _table("sin.canonical.l4_d4", "Four positions, D = 4.", base, 4, 4),
        _table("sin.canonical.l16_d2", "D = 2: one sine and one cosine column at frequency 1.", odd, 16, 2),
        _table("sin.canonical.l16_d1", "D = 1: a single sine column, sin(pos).", odd, 16, 1),
        _table("sin.canonical.l16_d3", "D = 3: two sine columns and one cosine column; the exponent divides by 3.", odd, 16, 3),
        _table("sin.canonical.l16_d8", "D = 8, 16 positions.", base + ("EMB-SIN-4",), 16, 8),
        _table("sin.canonical.l32_d8", "D = 8, 32 positions: the 16-position table is its prefix.", base + ("EMB-SIN-4",), 32, 8),
        _table("sin.canonical.l50_d7", "Odd D = 7: four sine and three cosine columns.", odd, 50, 7),
        _table("sin.canonical.l64_d5", "Odd D = 5.", odd, 64, 5),
        _table("sin.canonical.l64_d16", "D = 16, 64 positions.", base, 64, 16),
        _table("sin.canonical.l100_d10", "D = 10, 100 positions.", base, 100, 10),
        _table("sin.canonical.l128_d32", "D = 32, 128 positions (base64).", base, 128, 32),
        _table("sin.canonical.l512_d64", "The default max_seq_len 512, D = 64 (sampled rows).", long, 512, 64),
        _table("sin.canonical.l512_d128", "512 positions, D = 128 (sampled rows).", long, 512, 128),
        _table("sin.canonical.l2048_d32", "2048 positions, D = 32 (sampled rows).", long, 2048, 32),
        _table("sin.canonical.l8192_d7", "8192 positions, odd D = 7 (sampled rows).", long + ("EMB-SIN-3",), 8192, 7),
        _table("sin.canonical.l32768_d16", "max_len 32768, D = 16: float32 error grows with ulp(pos) (sampled rows).", long, 32768, 16),
        _table("sin.canonical.l32768_d64", "max_len 32768, D = 64 (sampled rows).", long + ("EMB-SIN-4", "EMB-TOL-1"), 32768, 64),
        _table("sin.canonical.l1000_d512", "D = 512, the width of large models (sampled rows).", long, 1000, 512),
        _table("sin.canonical.float64_l64_d8", "A float64 table.", base + ("EMB-FWD-4",), 64, 8, "float64", ("float64",)),
        _table("sin.canonical.float64_l32768_d7", "A float64 table at max_len 32768, odd D.", long + ("EMB-SIN-3", "EMB-FWD-4"), 32768, 7, "float64", ("float64",)),
    ]


def profile_cases() -> list[CaseSpec]:
    cat, t2t = ("EMB-SIN-V1",), ("EMB-SIN-V2",)
    concatenated, tensor2tensor = ("sinusoid-concatenated",), ("sinusoid-tensor2tensor",)
    return [
        _table("sin.concatenated.l16_d8", "Concatenated profile: [sin block | cos block], canonical frequencies.", cat, 16, 8, features=concatenated),
        _table("sin.concatenated.l64_d7", "Concatenated profile, odd D = 7: four sine then three cosine columns.", cat, 64, 7, features=concatenated),
        _table("sin.concatenated.l16_d1", "Concatenated profile, D = 1.", cat, 16, 1, features=concatenated),
        _table("sin.concatenated.l512_d64", "Concatenated profile, 512 x 64 (sampled rows).", cat, 512, 64, features=concatenated),
        _table("sin.concatenated.l32768_d16", "Concatenated profile at max_len 32768 (sampled rows).", cat, 32768, 16, features=concatenated),
        _table("sin.tensor2tensor.l16_d8", "tensor2tensor profile: frequencies base^(-k/(h-1)), [sin | cos].", t2t, 16, 8, features=tensor2tensor),
        _table("sin.tensor2tensor.l64_d7", "tensor2tensor profile, odd D = 7: a zero column is appended.", t2t, 64, 7, features=tensor2tensor),
        _table("sin.tensor2tensor.l16_d2", "tensor2tensor profile, D = 2: h - 1 = 0 is guarded, frequency 1.", t2t, 16, 2, features=tensor2tensor),
        _table("sin.tensor2tensor.l16_d1", "tensor2tensor profile, D = 1: only the zero column.", t2t, 16, 1, features=tensor2tensor),
        _table("sin.tensor2tensor.l512_d64", "tensor2tensor profile, 512 x 64 (sampled rows).", t2t, 512, 64, features=tensor2tensor),
    ]


def family_cases() -> list[CaseSpec]:
    """Spec 1.2.0: the profiles added as points of the family (EMB-SIN-6), and D = 2 for EMB-SIN-V1."""
    cat, diff, mlx = ("EMB-SIN-6", "EMB-SIN-V1"), ("EMB-SIN-6", "EMB-SIN-V3"), ("EMB-SIN-6", "EMB-SIN-V4")
    concatenated, diffusion, mlx_tag = ("sinusoid-concatenated",), ("sinusoid-guided-diffusion",), ("sinusoid-mlx",)
    refused = mlx + ("EMB-ERR-1",)
    return [
        _table("sin.concatenated.l16_d2", "Concatenated profile, D = 2: [sin(pos), cos(pos)], as the canonical table.", cat, 16, 2, features=concatenated),
        _table("sin.guided_diffusion.l16_d8", "guided-diffusion profile: [cos block | sin block], frequencies base^(-k/h).", diff, 16, 8, features=diffusion),
        _table("sin.guided_diffusion.l64_d7", "guided-diffusion profile, odd D = 7: three cosine, three sine columns, then a zero column.", diff, 64, 7, features=diffusion),
        _table("sin.guided_diffusion.l16_d2", "guided-diffusion profile, D = 2: [cos(pos), sin(pos)].", diff, 16, 2, features=diffusion),
        _table("sin.guided_diffusion.l16_d1", "guided-diffusion profile, D = 1: only the zero column.", diff, 16, 1, features=diffusion),
        _table("sin.guided_diffusion.l512_d64", "guided-diffusion profile, 512 x 64 (sampled rows).", diff, 512, 64, features=diffusion),
        _table("sin.mlx.l16_d8", "MLX profile: [sin | cos], base^(-k/(h-1)), the table scaled by sqrt(2/D) = 0.5.", mlx, 16, 8, features=mlx_tag),
        _table("sin.mlx.l16_d2", "MLX profile, D = 2: h - 1 = 0 is guarded (frequency 1), amplitude 1.", mlx, 16, 2, features=mlx_tag),
        _table("sin.mlx.l64_d16", "MLX profile, D = 16, 64 positions.", mlx, 64, 16, features=mlx_tag),
        _table("sin.mlx.l512_d64", "MLX profile, 512 x 64 (sampled rows).", mlx, 512, 64, features=mlx_tag),
        _table("sin.mlx.error_odd_d7", "MLX profile, odd D = 7: refused as invalid_config.", refused, 16, 7, features=mlx_tag, error="invalid_config"),
        _table("sin.mlx.error_odd_d1", "MLX profile, D = 1: refused as invalid_config.", refused, 4, 1, features=mlx_tag, error="invalid_config"),
    ]


def cases() -> list[CaseSpec]:
    return canonical_cases() + profile_cases() + family_cases()
