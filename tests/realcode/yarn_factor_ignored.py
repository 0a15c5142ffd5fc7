"""A YaRN port that leaves the attention factor out and never truncates the ramp bounds.

Inspired by: transformers' ``_compute_yarn_parameters`` returns ``(inv_freq, attention_factor)`` and ports that
keep only the first (the factor ignored: cos and sin not multiplied by 0.1 ln(factor) + 1); and ports written
before ``truncate`` existed that always floor/ceil the correction range, or, as here, never do.
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["not applied", "attention factor"],
        "mutants": ["rope.yarn_attention_factor_missing", "rope.tables.yarn_attention_factor_missing"],
        "claims": ["symptom:rope:amplitude:*:missing"],
    },
    {
        "phrase": ["frequenc", "ramp"],
        # truncate=False whatever the scaling says: the mutant's correction range, never rounded
        "mutants": ["rope.yarn_never_truncates", "rope.tables.yarn_never_truncates"],
        "claims": [
            "symptom:rope:frequencies:*:yarn_untruncated",
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },
]


class Port(Rope):
    def attention(self, scaling):
        return 1.0

    def yarn_bounds(self, rotary_dim, base, s):
        return super().yarn_bounds(rotary_dim, base, dict(s, truncate=False))


rope_tables, rope_forward, rope_backward = Port().functions()
