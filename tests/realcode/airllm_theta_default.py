"""A layer-by-layer Llama port whose rotary embedding never receives the config's rope_theta nor its llama3
frequency correction.

Inspired by: lyogavin/airllm PR #369 (``get_model_args_from_config`` copies every field but ``rope_theta``;
``sanitize_config`` then supplies the Llama 2 default 10000, so a Llama 3 model rotates with the wrong base) and
young-geng/EasyLM PR #117 (``rope_theta`` never passed to ``apply_rotary_emb``, and Llama 3's frequency correction,
transformers' ``_compute_llama3_parameters``, not applied).
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["base 10000", "base argument"],
        "mutants": ["rope.base_ignored", "rope.tables.base_ignored"],
        "claims": ["symptom:rope:frequencies:*:base_10000"],
    },  # base fixed at 10000
    {
        "phrase": ["llama3", "scaling"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:*:scaling_ignored",
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # rope_type llama3 computed as the default frequencies
]


class Port(Rope):
    def given_base(self, base):
        return 10000.0

    def llama3(self, inv, s):
        return inv


rope_tables, rope_forward, rope_backward = Port().functions()
