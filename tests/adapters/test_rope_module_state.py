"""The frameworks' rotary modules called several times on one instance (spec section 15): an adapter that declares
``stateful`` reuses the module of an instance's first call, so the module's own state is what is judged.
transformers' dynamic NTK keeps the frequencies it grew for a long call for a later call that is still not below
the original length (EMB-STA-2: 5.x ``dynamic_rope_update``); rotary-embedding-torch's cache is keyed by offset
since its #11 was fixed (EMB-STA-3). Every test skips with the reason when its framework is absent."""

from __future__ import annotations

import pytest
from helpers import outcomes, run_reported
from test_frameworks import needs
from test_more_frameworks import failing, measuring

KEPT_GROWN = {  # a later call at L0 < L < the longest seen, and one at exactly L0, keep the grown frequencies
    "stateful.rope.dynamic.long_then_shorter.half_split",
    "stateful.rope.dynamic.long_then_original.half_split",
}
STATE_DEVIATIONS = {"transformers:llama": KEPT_GROWN, "transformers:qwen2": KEPT_GROWN}


@pytest.mark.parametrize(
    "impl", ["transformers:llama", "transformers:qwen2", "rotary_embedding_torch", "rotary_embedding_torch:freqs"]
)
def test_a_framework_module_reused_on_one_instance_is_judged_on_its_own_state(tmp_path, impl):
    needs(impl)
    found = outcomes(run_reported(tmp_path, impl, *measuring(impl, "stateful.*"), timeout=900)[1])
    assert sum(outcome == "pass" for outcome in found.values()) >= 3, found  # it runs them, not only declines
    assert failing(found) == STATE_DEVIATIONS.get(impl, set())


def test_a_fresh_transformers_module_per_call_passes_what_the_instance_fails(tmp_path):
    """The same calls on no instance (each case of one call builds its module) pass: only the kept module fails."""
    needs("transformers:llama")
    found = outcomes(run_reported(tmp_path, "transformers:llama", select=("rope.forward.half_split.dynamic*",))[1])
    ran = {case: outcome for case, outcome in found.items() if outcome != "not_applicable"}  # partial: not Llama's
    assert ran and set(ran.values()) == {"pass"}
