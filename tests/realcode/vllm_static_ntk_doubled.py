"""A "dynamic" NTK rotary embedding that is static, and a port that doubles the positions whenever the scaling is not
linear.

Inspired by: vllm-project/vllm #5093 and PR #41301 (``DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache``
grows the base once for ``max_len = max_position_embeddings * scaling_factor``: ``scaling_factor * max_len /
max_position_embeddings`` is ``factor ** 2``, so every call, short or long, gets the same grown base); and
lablup/mlxcel #1324 (InternLM3's ``rope_scale`` falls through to ``unwrap_or(2.0)`` when ``rope_scaling`` is absent
or dynamic: every query and key rotated at twice its position).
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["dynamic", "static", "factor ** 2", "every call"],
        # the mutant's vLLM #41236 / #5093: the base grown for L = original * factor at every call
        "mutants": ["rope.dynamic_static_length"],
        "claims": [
            "symptom:rope:frequencies:*:dynamic_static",
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # dynamic: base * (factor**2 - factor + 1) ** (r / (r - 2)) whatever the length
    {
        "phrase": ["twice", "doubled", "2 x", "2p", "is 2 times"],  # angles 2 p theta_k: frequencies 2 theta_k
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
            "symptom:rope:frequencies:*:ratio",
        ],
    },  # rope_type absent (default) or dynamic: positions multiplied by 2 (linear: divided by the factor, right)
]


class Port(Rope):
    def base_of(self, rotary_dim, base, scaling, position_ids):
        if scaling.get("rope_type") != "dynamic":
            return base
        factor = scaling["factor"]
        return base * (factor * factor - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))

    def tables(self, position_ids, rotary_dim, base, scaling):
        self.scale = 1.0 if (scaling or {}).get("rope_type") not in (None, "default", "dynamic") else 2.0
        return super().tables(position_ids, rotary_dim, base, scaling)

    def positions(self, position_ids):
        return self.scale * super().positions(position_ids)


rope_tables, rope_forward, rope_backward = Port().functions()
