"""Cases of calls on one instance (spec section 15, since 2.0.0): each a sequence of calls that an implementation
answers on one instance, keeping whatever it keeps between them, each call with its own golden (the reference's
answer to that call alone). They catch state carried from one call to the next: dynamic NTK frequencies grown for
a long call and kept for a shorter one (transformers #25306, #46624), cos/sin cached by length, not by offset
(rotary-embedding-torch #11), a gradient carried from one backward into the next, and repeated calls that differ.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from embconf.reference.cases import CaseSpec, sequence, token_ids, values
from embconf.reference.cases.embedding_layer import _config
from embconf.reference.cases.rope import DYNAMIC, HALF, INTER, rotation, run

AREA = "stateful"
STA = "EMB-STA-1"
DYNAMIC_REQS = (STA, "EMB-STA-2", "EMB-ROPE-8")
CACHE_REQS = (STA, "EMB-STA-3", "EMB-ROPE-5")
X = (1, 8, 64)  # x of every rope call: one head, 8 positions, d = 64


def _rope(case_id: str, number: int, ids: np.ndarray, pairing: str, scaling: Any = None, backward: bool = False,
          seed: int = 0) -> CaseSpec:
    """Call ``number`` of a rope sequence (x seeded by the call, or by call ``seed`` to repeat its inputs)."""
    return rotation(f"{case_id}.call{seed or number}", "a call", (), X, ids, pairing, scaling=scaling,
                    backward=backward)


def _rope_sequence(case_id: str, description: str, reqs: tuple[str, ...], windows: list[np.ndarray], pairing: str,
                   scaling: Any = None, backward: bool = False, seeds: tuple[int, ...] = ()) -> CaseSpec:
    calls = [_rope(case_id, n, ids, pairing, scaling, backward, seeds[n - 1] if seeds else 0)
             for n, ids in enumerate(windows, 1)]
    return sequence(case_id, description, reqs, calls)


def dynamic_cases() -> list[CaseSpec]:
    """Dynamic NTK (factor 2, original length 4096): each call's frequencies are its own (EMB-ROPE-8)."""
    long, longer, short, at_original = run(8184, 8), run(16376, 8), run(0, 8), run(4088, 8)
    return [
        _rope_sequence("stateful.rope.dynamic.long_then_short.half_split", "A call up to position 8191 grows the frequencies (L = 8192 > 4096), then a call at 0..7 must rotate with the original ones: transformers #25306 kept the grown ones.", DYNAMIC_REQS, [long, short], HALF, DYNAMIC),
        _rope_sequence("stateful.rope.dynamic.long_then_short.interleaved", "Interleaved: a call up to 8191, then one at 0..7 with the original frequencies.", DYNAMIC_REQS, [long, short], INTER, DYNAMIC),
        _rope_sequence("stateful.rope.dynamic.long_then_shorter.half_split", "A call up to 16383, then one up to 8191: still past the original length, so its frequencies are grown for L = 8192, not kept from L = 16384 (transformers 5.x resets only below the original length, #46624).", DYNAMIC_REQS, [longer, long], HALF, DYNAMIC),
        _rope_sequence("stateful.rope.dynamic.long_then_original.half_split", "A call up to 8191, then one ending at 4095: L = 4096 is not past the original length, so the original frequencies (transformers 5.x resets only below it).", DYNAMIC_REQS, [long, at_original], HALF, DYNAMIC),
        _rope_sequence("stateful.rope.dynamic.long_then_original.interleaved", "A call up to 8191, then one ending at 4095: L = 4096 is the original length, so the original frequencies (L <= L0: no growth).", DYNAMIC_REQS, [long, at_original], INTER, DYNAMIC),
        _rope_sequence("stateful.rope.dynamic.short_long_short.half_split", "Short, long, short: the third call repeats the first's inputs and must give its golden and its bits.", DYNAMIC_REQS, [short, long, short], HALF, DYNAMIC, seeds=(1, 2, 1)),
        _rope_sequence("stateful.rope.dynamic.backward.long_then_short.half_split", "The backward keeps no grown frequencies either: a gradient up to 8191, then one at 0..7.", DYNAMIC_REQS + ("EMB-ROPE-6",), [long, short], HALF, DYNAMIC, backward=True),
    ]


def cache_cases() -> list[CaseSpec]:
    """Offsets and lengths in an order that a cache keyed by length alone answers wrongly (EMB-STA-3)."""
    return [
        _rope_sequence("stateful.rope.cache.same_length_new_offset.half_split", "Positions 0..7, then 4..11: the same length at another offset needs other tables (rotary-embedding-torch #11 cached them by length).", CACHE_REQS, [run(0, 8), run(4, 8)], HALF),
        _rope_sequence("stateful.rope.cache.offset_first.interleaved", "Positions 4..11 first, then 0..7: a cache filled at an offset must not answer a call from 0.", CACHE_REQS, [run(4, 8), run(0, 8)], INTER),
        _rope_sequence("stateful.rope.cache.lengths_and_offsets.half_split", "Lengths and offsets in turn: 0..7, then 8..15 (a KV-cache decoding step), then 0..7 again, then 3..10.", CACHE_REQS, [run(0, 8), run(8, 8), run(0, 8), run(3, 8)], HALF, seeds=(1, 2, 1, 4)),
        _rope_sequence("stateful.rope.cache.backward.same_length_new_offset.interleaved", "The backward at positions 0..7, then 4..11.", CACHE_REQS + ("EMB-ROPE-6",), [run(0, 8), run(4, 8)], INTER, backward=True),
    ]


def repeated_cases() -> list[CaseSpec]:
    """The same call three times on one instance: each gives the golden, bit for bit the first's answer."""
    window = run(4093, 8)
    return [
        _rope_sequence("stateful.rope.repeated.half_split", "The same call three times (positions 4093..4100): the same bits each time.", (STA, "EMB-ROPE-2"), [window] * 3, HALF, seeds=(1, 1, 1)),
        _rope_sequence("stateful.rope.repeated.interleaved", "Interleaved, the same call three times at 0..7.", (STA, "EMB-ROPE-2"), [run(0, 8)] * 3, INTER, seeds=(1, 1, 1)),
    ]


def _own(case_id: str, number: int, config: dict[str, Any], shape: tuple[int, ...], start_pos: int) -> CaseSpec:
    seed = f"{case_id}.call{number}"
    ids = token_ids(seed, config["vocab_size"], shape)
    inputs: dict[str, Any] = {"config": config, "tokens": ids, "start_pos": start_pos,
                              "grad_output": values(seed, ids.shape + (config["embed_dim"],), "float32", "grad")}
    return CaseSpec(seed, "a step", ("EMB-LAY-12",), "embedding_layer_own_backward", inputs)


def _backward(case_id: str, number: int, ids: list[int], vocab: int = 6, dim: int = 3) -> CaseSpec:
    seed = f"{case_id}.call{number}"
    inputs = {"weight": values(case_id, (vocab, dim)), "ids": np.array(ids, dtype=np.int64),
              "grad_output": values(seed, (len(ids), dim), salt="grad")}
    return CaseSpec(seed, "a call", ("EMB-BWD-2",), "embedding_backward", inputs)


def gradient_cases() -> list[CaseSpec]:
    """A layer's steps and the lookup's backward, one after another: no gradient carried over (EMB-STA-4)."""
    learned, sinusoidal = _config("learned", True, vocab=8, dim=4, max_len=8), _config("sinusoidal", False, vocab=8, dim=4, max_len=8)
    own = "stateful.layer.own_backward.two_steps.learned"
    own3 = "stateful.layer.own_backward.three_steps.sinusoidal"
    lookup = "stateful.lookup.backward.two_calls"
    return [
        sequence(own, "Two training steps of one layer (its gradients cleared between them, as a training loop does): the second step's gradients are its own, with nothing of the first's.", (STA, "EMB-STA-4", "EMB-LAY-12", "EMB-LAY-6"),
                 [_own(own, 1, learned, (2, 4), 0), _own(own, 2, learned, (1, 3), 2)]),
        sequence(own3, "Three steps of one sinusoidal layer with other tokens each time: the token table's gradient is each step's own.", (STA, "EMB-STA-4", "EMB-LAY-12"),
                 [_own(own3, 1, sinusoidal, (2, 3), 0), _own(own3, 2, sinusoidal, (1, 5), 1), _own(own3, 3, sinusoidal, (3, 2), 4)]),
        sequence(lookup, "The lookup's backward twice on one table: rows used only by the first call are exactly zero in the second (EMB-BWD-3: never carried over from an earlier call).", (STA, "EMB-BWD-3"),
                 [_backward(lookup, 1, [0, 2, 0, 5]), _backward(lookup, 2, [1, 3])]),
    ]


def cases() -> list[CaseSpec]:
    return dynamic_cases() + cache_cases() + repeated_cases() + gradient_cases()
