"""``transformers:NAME``: a sinusoid table or a rotary position embedding that Hugging Face transformers
ships, against the spec.

Each NAME is one function or module of transformers, called as its model calls it. A model's rotary
embedding (NAME one of llama, gpt_neox, qwen2, gemma, phi, phi3, qwen2_vl) provides the rope operations: see
:mod:`embconf.adapters.transformers_rope`. A sinusoid table declares the convention it really follows
(so its profile cases identify it, and the canonical cases show that it is not canonical where it is
not) and provides only ``sinusoidal_table``:

- ``distilbert``: ``modeling_distilbert.create_sinusoidal_embeddings(n_pos, dim, out)``, filling a
  fresh ``out`` tensor of the requested dtype: interleaved (canonical). Its values are computed in
  float64 and stored through a float32 tensor, which is what a float64 table then holds.
- ``marian``: ``MarianSinusoidalPositionalEmbedding(max_len, D).create_weight()`` (the table its
  model's ``_init_weights`` copies in): concatenated [sin | cos], canonical frequencies.
- ``m2m100``: ``M2M100SinusoidalPositionalEmbedding.get_embedding(max_len, D)`` (fairseq's code,
  no padding row): tensor2tensor profile, with fairseq's division by ``D/2 - 1``.
- ``whisper``: ``modeling_whisper.sinusoids(max_len, D)``: tensor2tensor layout; rejects odd D.

float64 is declared only where the function takes the dtype from its caller (``distilbert``). No
check is added and no exception is mapped: a rejected width or a ZeroDivisionError is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from embconf.adapters import ImplementationError
from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.instances import CallsOnInstances
from embconf.adapters.transformers_rope import ROPE_MODELS, HfRope, rope_capabilities
from embconf.model.contract import Capabilities
from embconf.model.sinusoid import declaring

EXTRA = "transformers"


@dataclass(frozen=True)
class Table:
    module: str  # under transformers.models
    title: str
    convention: str
    float64: bool
    build: Callable[[Any, Any, int, int, str], Any]  # (models module, torch, max_len, D, dtype) -> tensor


def _distilbert(mod: Any, torch: Any, max_len: int, dim: int, dtype: str) -> Any:
    out = torch.empty(max_len, dim, dtype=getattr(torch, dtype))
    mod.create_sinusoidal_embeddings(max_len, dim, out)
    return out


TABLES = {
    "distilbert": Table(
        "distilbert.modeling_distilbert", "DistilBERT create_sinusoidal_embeddings", "interleaved", True, _distilbert
    ),
    "marian": Table(
        "marian.modeling_marian",
        "Marian MarianSinusoidalPositionalEmbedding",
        "concatenated",
        False,
        lambda mod, torch, n, d, dtype: mod.MarianSinusoidalPositionalEmbedding(n, d).create_weight(),
    ),
    "m2m100": Table(
        "m2m_100.modeling_m2m_100",
        "M2M100 SinusoidalPositionalEmbedding.get_embedding",
        "tensor2tensor",
        False,
        lambda mod, torch, n, d, dtype: mod.M2M100SinusoidalPositionalEmbedding.get_embedding(n, d),
    ),
    "whisper": Table(
        "whisper.modeling_whisper",
        "Whisper sinusoids",
        "tensor2tensor",
        False,
        lambda mod, torch, n, d, dtype: mod.sinusoids(n, d),
    ),
}


class TransformersAdapter(CallsOnInstances, FrameworkAdapter):
    kind = "transformers"
    targets = None  # a table or a model, checked below (the message lists them)

    def __init__(self, target: str) -> None:
        if target not in TABLES and target not in ROPE_MODELS:
            raise ImplementationError(
                f"unknown transformers table or model {target!r}; use transformers:NAME with NAME one of "
                f"{', '.join([*TABLES, *ROPE_MODELS])}"
            )
        transformers = import_framework("transformers", EXTRA)
        self.torch = import_framework("torch", EXTRA)
        if target in ROPE_MODELS:
            if int(str(transformers.__version__).split(".")[0]) < 5:
                raise ImplementationError(
                    f"transformers:{target} needs transformers 5 or later (rope_parameters); {transformers.__version__} is installed"
                )
            model = ROPE_MODELS[target]
            rope = self.rope = HfRope(self.torch, import_framework(f"transformers.models.{model.module}", EXTRA), model)
            caps = rope_capabilities(rope)
            self.instances = rope.instances  # the rope operations reuse the rotary module of an instance's first call
            super().__init__(f"transformers:{target}", transformers, caps, f"transformers {model.title}", (rope,))
            return
        self.table = TABLES[target]
        self.module = import_framework(f"transformers.models.{self.table.module}", EXTRA)
        caps = Capabilities(
            frozenset({"sinusoidal_table"}),
            frozenset({"float64"} if self.table.float64 else set()),
            conventions=declaring(self.table.convention),
        )
        super().__init__(f"transformers:{target}", transformers, caps, f"transformers {self.table.title}")

    rope: Optional[HfRope] = None

    def sinusoidal_table(self, max_len: int, embed_dim: int, dtype: str = "float32") -> Any:
        with self.torch.no_grad():
            return to_numpy(self.table.build(self.module, self.torch, max_len, embed_dim, dtype))
