"""The sinusoid family (spec 1.2.0, EMB-SIN-6): the parameters a sinusoid table is a point of, and the named
profiles of ``spec/vocabulary.json`` (``sinusoid_family``), each a point. The canonical table (EMB-SIN-2) is
the profile ``interleaved``; an implementation declares another point by name or by its parameters.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Iterable, Optional, Union

from embconf.model.declarations import ConventionKind
from embconf.model.vocabulary import vocabulary


class Layout(enum.Enum):
    INTERLEAVED = "interleaved"  # sin at column 2k, cos at 2k+1
    SIN_COS = "sin_cos"  # [sin block | cos block]
    COS_SIN = "cos_sin"  # [cos block | sin block]


class Spacing(enum.Enum):
    """The exponent of pair k: w_k = base^(-e_k), h = floor(D/2)."""

    TWO_K_OVER_D = "2k/D"
    K_OVER_H_MINUS_1 = "k/(h-1)"  # guarded: k / max(h-1, 1)
    K_OVER_H = "k/h"  # guarded: k / max(h, 1)


class AngleUnit(enum.Enum):
    RADIANS = "radians"
    TURNS = "turns"  # the angle pos * w_k counts full turns: sin and cos take 2*pi*pos*w_k


class OddWidth(enum.Enum):
    SINE_COLUMN = "sine_column"  # ceil(D/2) sine columns, floor(D/2) cosine columns
    ZERO_COLUMN = "zero_column"  # floor(D/2) of each, then a zero column last
    REFUSED = "refused"  # odd D is invalid_config


SQRT_2_OVER_D = "sqrt(2/D)"  # an amplitude that depends on the width (MLX's default scale)
CANONICAL = "interleaved"
CANONICAL_FEATURE = f"sinusoid-{CANONICAL}"  # the canonical table's cases carry it (1.2.0)
FAMILY_FEATURE = "sinusoid-family"  # a declared point that no named profile is
FAMILY_REQUIREMENT = "EMB-SIN-6"
_ENUMS: dict[str, type[enum.Enum]] = {
    "layout": Layout,
    "spacing": Spacing,
    "angle_unit": AngleUnit,
    "odd_d": OddWidth,
}
PARAMETERS = ("layout", "spacing", "base", "amplitude", "angle_unit", "odd_d")
# The ranges of the numeric parameters (EMB-SIN-6): wide around what real conventions use (base 10000 in every
# profile, 10 to 1e5 in real code; amplitude 1 or sqrt(2/D)), narrow enough that every golden is a table of
# numbers a float16 holds (an amplitude of 1e-300 rounds it to zeros) and every tolerance stays a small part of it.
BASE_RANGE = (2.0, 1e7)
AMPLITUDE_RANGE = (1e-3, 1e3)
_LAYOUT_TEXT = {Layout.INTERLEAVED: "interleaved", Layout.SIN_COS: "[sin | cos]", Layout.COS_SIN: "[cos | sin]"}


@dataclass(frozen=True)
class SinusoidProfile:
    """One point of the family: every sinusoid table the spec can name."""

    layout: Layout = Layout.INTERLEAVED
    spacing: Spacing = Spacing.TWO_K_OVER_D
    base: float = 10000.0
    amplitude: Union[float, str] = 1.0  # a number, or SQRT_2_OVER_D
    angle_unit: AngleUnit = AngleUnit.RADIANS
    odd_d: OddWidth = OddWidth.SINE_COLUMN

    @classmethod
    def from_json(cls, raw: Any) -> SinusoidProfile:
        """The point ``raw`` names ({parameter: value}; a parameter left out has its canonical value).
        ValueError (one line) for an unknown parameter or value."""
        if not isinstance(raw, Mapping):
            raise ValueError(f"sinusoid parameters must be a mapping of {', '.join(PARAMETERS)}, got {raw!r}")
        unknown = sorted(str(key) for key in raw if key not in PARAMETERS)
        if unknown:
            raise ValueError(f"unknown sinusoid parameter(s) {', '.join(unknown)}; known: {', '.join(PARAMETERS)}")
        values: dict[str, Any] = {}
        for name, value in raw.items():
            if name in _ENUMS:
                choices = [member.value for member in _ENUMS[name]]
                if value not in choices:
                    raise ValueError(f"sinusoid parameter {name} {value!r} is not one of {', '.join(choices)}")
                values[name] = _ENUMS[name](value)
            elif name == "base":
                values[name] = _in_range(name, value, BASE_RANGE)
            else:
                values[name] = (
                    value if value == SQRT_2_OVER_D else _in_range(name, value, AMPLITUDE_RANGE, SQRT_2_OVER_D)
                )
        return replace(cls(), **values)

    def to_json(self) -> dict[str, Any]:
        return {
            "layout": self.layout.value,
            "spacing": self.spacing.value,
            "base": self.base,
            "amplitude": self.amplitude,
            "angle_unit": self.angle_unit.value,
            "odd_d": self.odd_d.value,
        }

    @property
    def name(self) -> Optional[str]:
        """The named profile this point is, or None."""
        return next((name for name, point in named_profiles().items() if point == self), None)

    @property
    def canonical(self) -> bool:
        return self.name == CANONICAL

    @property
    def feature(self) -> str:
        """The feature its cases carry: ``sinusoid-<profile>``, or ``sinusoid-family`` for an unnamed point."""
        return f"sinusoid-{self.name}" if self.name else FAMILY_FEATURE

    @property
    def requirement(self) -> str:
        name = self.name
        return str(_profiles_json()[name]["requirement"]) if name else FAMILY_REQUIREMENT

    # As a declared convention (:mod:`embconf.model.convention`): a point other than the canonical table.

    @property
    def kind(self) -> str:
        return "sinusoid"

    @property
    def canonical_marker(self) -> str:
        """The feature of the canonical table's cases, which a declared point replaces."""
        return CANONICAL_FEATURE

    @property
    def computed(self) -> bool:
        """A point no named profile is has its cases computed in the run that declares it (named: frozen)."""
        return self.name is None

    def changes(self, operation: str, features: Iterable[str]) -> bool:
        """Whether a case is one of the canonical table's (its values are rows of that table)."""
        return not self.canonical and CANONICAL_FEATURE in set(features)

    def replaced(self) -> str:
        return f"a case of the canonical sinusoid table: it declares the sinusoid profile {self.describe()}"

    def amplitude_for(self, embed_dim: int) -> float:
        return math.sqrt(2.0 / embed_dim) if self.amplitude == SQRT_2_OVER_D else float(self.amplitude)

    def describe(self) -> str:
        """``[sin | cos] (EMB-SIN-V1)``: the profile's title, or the parameters that are not canonical."""
        name = self.name
        if name:
            return f"{_profiles_json()[name]['title']} ({self.requirement})"
        canonical = SinusoidProfile().to_json()
        parts = [_LAYOUT_TEXT[self.layout]] + [
            f"{key} {_text(value)}"
            for key, value in self.to_json().items()
            if key != "layout" and value != canonical[key]
        ]
        return f"{', '.join(parts)} ({FAMILY_REQUIREMENT})"

    def parameters_text(self) -> str:
        """``layout sin_cos, spacing 2k/D, base 10000, ...``: every parameter of the point."""
        return ", ".join(f"{key} {_text(value)}" for key, value in self.to_json().items())


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _in_range(name: str, value: Any, bounds: tuple[float, float], other: str = "") -> float:
    """``value`` as a float when it is a number within ``bounds``; ValueError (one line) otherwise."""
    if not _number(value) or not bounds[0] <= value <= bounds[1]:
        alternative = f" or {other!r}" if other else ""
        raise ValueError(
            f"sinusoid parameter {name} {value!r} is not a number from {bounds[0]:g} to {bounds[1]:g}{alternative} "
            "(EMB-SIN-6)"[:300]
        )
    return float(value)


def _profiles_json() -> dict[str, Any]:
    return dict(vocabulary()["sinusoid_family"]["profiles"])


@lru_cache(maxsize=None)
def named_profiles() -> dict[str, SinusoidProfile]:
    """{profile name: its point}, in the vocabulary's order (``interleaved``, the canonical table, first)."""
    return {name: SinusoidProfile.from_json(entry["parameters"]) for name, entry in _profiles_json().items()}


def profile_named(name: Any) -> SinusoidProfile:
    """The named profile ``name``; ValueError (one line) when there is none."""
    profiles = named_profiles()
    if not isinstance(name, str) or name not in profiles:
        raise ValueError(f"unknown sinusoid_convention {name!r}: not one of {', '.join(profiles)}")
    return profiles[name]


def declared_profile(convention: Any = None, parameters: Any = None) -> SinusoidProfile:
    """The point an implementation declares by name (``sinusoid_convention``), by parameters
    (``sinusoid_parameters``) or both (then they must agree); canonical when neither. ValueError (one line)."""
    named = profile_named(convention) if convention is not None else None
    point = SinusoidProfile.from_json(parameters) if parameters is not None else None
    if named and point and named != point:
        raise ValueError(
            f"sinusoid_convention {convention!r} and sinusoid_parameters name different tables: {point.describe()}"
        )
    return named or point or SinusoidProfile()


def declaring(name: str) -> frozenset[SinusoidProfile]:
    """What an implementation of the named profile declares: that point, or nothing for the canonical table."""
    point = profile_named(name)
    return frozenset() if point.canonical else frozenset({point})


def claim_clause(profile: SinusoidProfile) -> str:
    """What a conformance claim adds for a declared non-canonical profile (spec section 11), or ""."""
    return "" if profile.canonical else f", sinusoid profile: {profile.describe()}; canonical table not provided"


def profile_features() -> set[str]:
    """Every feature that selects a sinusoid profile's cases (never claimed directly: declared as a profile)."""
    return {f"sinusoid-{name}" for name in _profiles_json()} | {FAMILY_FEATURE}


def _read(raw: Mapping[str, Any]) -> frozenset[SinusoidProfile]:
    """The point a capabilities mapping declares; ``sinusoid_convention: family`` (how a report names a point no
    profile is) stands for its parameters."""
    name, parameters = raw.get("sinusoid_convention"), raw.get("sinusoid_parameters")
    point = declared_profile(None if name == "family" and parameters is not None else name, parameters)
    return frozenset() if point.canonical else frozenset({point})


def point_of(declared: Iterable[Any]) -> SinusoidProfile:
    """The sinusoid point among declared conventions: the declared one, or the canonical table."""
    return next((c for c in declared if isinstance(c, SinusoidProfile)), SinusoidProfile())


def _to_json(declared: frozenset[SinusoidProfile]) -> dict[str, Any]:
    point = point_of(declared)
    return {"sinusoid_convention": point.name or "family", "sinusoid_parameters": point.to_json()}


def _undeclared(missing: list[str], declared: frozenset[SinusoidProfile]) -> Optional[str]:
    if not missing:
        return None
    return f"a case of another sinusoid profile ({', '.join(missing)}): it declares {point_of(declared).describe()}"


KIND = ConventionKind(
    "sinusoid",
    "sinusoidal",
    frozenset(profile_features()),
    frozenset({CANONICAL_FEATURE}),
    {"EMBCONF_SINUSOID_CONVENTION": "sinusoid_convention", "EMBCONF_SINUSOID_PARAMETERS": "sinusoid_parameters"},
    _read,
    _to_json,
    lambda declared: claim_clause(point_of(declared)),
    _undeclared,
    single=True,
)
