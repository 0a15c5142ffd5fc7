"""The cases of a declared point of the sinusoid family that no named profile is (feature ``sinusoid-family``,
spec 1.2.0, EMB-SIN-6): the sizes of the named profiles' ``sinusoidal_table`` cases among those run, each
computed by the reference for the declared point (float64, rounded once), with the tolerance of section 8.4
scaled for the amplitude and for angles in turns. They exist only in the run that declares the point.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from embconf.corpus.fixtures import Case
from embconf.model.sinusoid import FAMILY_FEATURE, FAMILY_REQUIREMENT, AngleUnit, OddWidth, SinusoidProfile

SOURCE = "computed for the declared sinusoid point"


def point_cases(declared: Iterable[SinusoidProfile], cases: Sequence[Case]) -> list[Case]:
    """The declared point's cases, one per distinct (max_len, D, dtype) of the profile cases in ``cases``;
    none for a named profile (its cases are frozen goldens) or the canonical table."""
    profile = next(iter(declared), SinusoidProfile())
    if profile.name:
        return []
    from embconf.reference.cases import CaseSpec
    from embconf.reference.generate import build_case

    sizes: dict[tuple[int, int, str], None] = {}
    for case in cases:
        profiled = any(f.startswith("sinusoid-") and f != "sinusoid-interleaved" for f in case.features)
        if case.operation == "sinusoidal_table" and profiled:
            inputs = case.raw_inputs
            sizes[(int(inputs["max_len"]), int(inputs["embed_dim"]), str(inputs["dtype"]))] = None
    built = []
    for max_len, dim, dtype in sizes:
        suffix = "" if dtype == "float32" else f"_{dtype}"
        refused = dim % 2 == 1 and profile.odd_d is OddWidth.REFUSED
        features = (FAMILY_FEATURE,) + ((dtype,) if dtype != "float32" else ())
        spec = CaseSpec(
            f"sin.family.l{max_len}_d{dim}{suffix}",
            f"The declared sinusoid point {profile.describe()}: {max_len} x {dim}, {dtype}.",
            (FAMILY_REQUIREMENT,) + (("EMB-ERR-1",) if refused else ()),
            "sinusoidal_table",
            {"max_len": max_len, "embed_dim": dim, "dtype": dtype},
            features,
            error="invalid_config" if refused else None,
            sample_rows=_sample(max_len, dim),
        )
        built.append(_as_case(build_case(spec, profile), profile, dim))
    return built


def _sample(max_len: int, dim: int) -> dict[str, list[int]]:
    from embconf.reference.cases.sinusoidal import FULL_ROWS_LIMIT, sampled_rows

    return {"table": sampled_rows(max_len)} if max_len * dim > FULL_ROWS_LIMIT else {}


def _as_case(record: dict, profile: SinusoidProfile, dim: int) -> Case:
    tolerance = dict(record.get("tolerance", {}))
    if "table" in tolerance:
        tolerance["table"] = _scaled(tolerance["table"], profile, dim)
    return Case.from_record(record, SOURCE, tolerance)


def _scaled(rule: dict, profile: SinusoidProfile, dim: int) -> dict:
    """Section 8.4's bound for a point whose values reach the amplitude A and whose angles are a * pos * w_k:
    the absolute terms scale with the values, atol times A and the position term times A * a (a = 2*pi in
    turns); rtol, relative already, does not. So the bound stays the same small part of the table whatever
    A is: an all-zero table never passes where the golden is not all zero (A is bounded: AMPLITUDE_RANGE)."""
    amplitude = profile.amplitude_for(dim)
    turns = 2 * math.pi if profile.angle_unit is AngleUnit.TURNS else 1.0
    if amplitude == 1.0 and turns == 1.0:
        return rule
    scaled = {**rule, "atol": rule["atol"] * amplitude}
    scaled["position"] = {**rule["position"], "ulps": rule["position"]["ulps"] * amplitude * turns}
    scaled["rule"] = (
        f"{rule['rule']}; times {amplitude:g} (amplitude) and {turns:g} (angle unit) for the declared point"
    )
    return scaled
