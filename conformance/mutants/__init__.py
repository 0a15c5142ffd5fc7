"""The catalogue of known mistakes ("mutants"): realistic wrong implementations of the spec.

Each mutant is the reference with one or two operations replaced (see base.py);
a mistake written for the plain lookup is composed with the optional inputs
(``padding_idx``, ``scale_grad_by_freq``) as the spec applies them
(with_options.py), so it can be replayed on every case. Run one with ``embconf run --impl mutant:ID``; the
diagnosis of a failing case names the mutants whose results match the implementation's. Which golden cases kill
each mutant (``embconf mutants``, ``embconf explain``) is the feature package :mod:`embconf.mutation`.

Rooms: ``base`` (what a mutant is, the registry), ``compose`` (the row-sparse gradient and the layer built from an
implementation's parts), ``with_options`` (mistakes composed with the optional inputs), ``adapter`` (a mutant as an
implementation), and the mistakes by area: ``lookup``, ``positions``, ``sinusoid``, ``layer``, ``options``,
``memory``, ``rope`` with ``rope_families`` (the 2.0.0 scaling families and the fused rotation), ``rope_state``
(state kept between calls) and ``rope_reports`` (mistakes found in public trackers), ``bags`` with ``bag_reduce``
(its arithmetic) and ``bag_reports`` (mistakes found in public trackers), ``quantized`` (reading, quantizing and
sizing quantized tables), ``frameworks`` (deviations measured in real frameworks), ``evading`` (mistakes only at
combinations of boundaries no golden is at yet: evading by design)."""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType

from embconf.model.rope import LAYER_FEATURE
from embconf.model.vocabulary import areas
from embconf.mutants import (
    bag_reports,
    bags,
    evading,
    frameworks,
    layer,
    lookup,
    memory,
    options,
    positions,
    quantized,
    rope,
    rope_families,
    rope_reports,
    rope_state,
    sinusoid,
)
from embconf.mutants.base import Mutant, registry, with_options_all
from embconf.mutants.compose import Implementation

# area -> the modules whose mistakes replace that family's operations (each registers its mutants when imported;
# a module may serve several families: the options of a production embedding, the frameworks' deviations)
MODULES: dict[str, tuple[ModuleType, ...]] = {
    "token_lookup": (lookup, options, frameworks, evading),
    "sinusoidal": (sinusoid, options, frameworks),
    "learned_positions": (positions, frameworks),
    "embedding_layer": (layer, frameworks),
    "memory": (memory,),
    "rope": (rope, rope_families, rope_state, rope_reports, evading),
    "bags": (bags, bag_reports, evading),
    "quantized": (quantized,),
}


def catalogue() -> list[Mutant]:
    """Every mutant, in a stable order: by spec area (``spec/vocabulary.json``), then as registered."""
    order = list(areas())
    return sorted(registry().values(), key=lambda m: order.index(m.area))


def get(mutant_id: str) -> Mutant:
    """The mutant with this id; KeyError naming close ids otherwise."""
    found = registry().get(mutant_id)
    if found is None:
        close = [m.id for m in catalogue() if mutant_id.split(".")[-1] in m.id][:5]
        raise KeyError(
            f"no mutant {mutant_id!r}"
            + (f"; did you mean {', '.join(close)}?" if close else " (see `embconf mutants`)")
        )
    return found


def implementation(mutant_id: str) -> Implementation:
    """The mutant's operations: its overrides, the reference elsewhere, composed operations built on both. A
    mistake in state kept between calls gets a fresh instance each time (the others one, built once)."""
    mutant = get(mutant_id)
    if mutant.fresh is not None:
        return Implementation(with_options_all(mutant.fresh()), rope_layer=LAYER_FEATURE in mutant.claims)
    return _stateless(mutant_id)


@lru_cache(maxsize=None)
def _stateless(mutant_id: str) -> Implementation:
    mutant = get(mutant_id)
    return Implementation(mutant.overrides, rope_layer=LAYER_FEATURE in mutant.claims)


__all__ = ["MODULES", "Mutant", "Implementation", "catalogue", "get", "implementation"]
