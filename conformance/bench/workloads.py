"""The bench's workloads: table sizes named after real models, ids drawn uniform or Zipf-distributed
(seeded, so every run and every implementation sees the same ids), and the bytes each operation must
move at least (the roofline's numerator)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

N_IDS = 8192  # ids per call: a batch of 8 x 1024 tokens, or 16 x 512
ITEM = 4  # float32
ID_ITEM = 8  # int64 ids
SEED = 20261201
ZIPF_EXPONENT = 1.0  # Zipf's law for word frequencies: the k-th most frequent token occurs ~ 1/k as often
DISTRIBUTIONS = ("uniform", "zipf")
OPERATIONS = ("embedding_forward", "embedding_backward")

# name -> (vocabulary V, width D, ids per call N, what it is)
SIZES: dict[str, tuple[int, int, int, str]] = {
    "tiny": (4096, 32, 1024, "a table and batch small enough for tests"),
    "small": (8000, 256, N_IDS, "a small table (a TinyTorch-scale model)"),
    "bert-base": (30522, 768, N_IDS, "BERT-base's token table"),
    "gpt2-small": (50257, 768, N_IDS, "GPT-2 small's token table"),
}
DEFAULT_SIZES = ("small", "bert-base", "gpt2-small")


class UnknownSize(ValueError):
    """A --sizes name that is not in SIZES (the message lists the known ones)."""


@dataclass(frozen=True)
class Workload:
    """One problem: a V x D float32 table and N ids drawn from ``distribution``."""

    size: str
    vocab: int
    dim: int
    n_ids: int
    distribution: str

    @property
    def name(self) -> str:
        return f"{self.size}/{self.distribution}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def inputs(self, operation: str) -> dict[str, np.ndarray]:
        """The operation's inputs, the same on every call (seeded by the workload)."""
        rng = np.random.default_rng([SEED, self.vocab, self.dim, DISTRIBUTIONS.index(self.distribution)])
        weight = rng.standard_normal((self.vocab, self.dim), dtype=np.float32)
        inputs = {"weight": weight, "ids": self.ids(rng)}
        if operation == "embedding_backward":
            inputs["grad_output"] = rng.standard_normal((self.n_ids, self.dim), dtype=np.float32)
        return inputs

    def ids(self, rng: np.random.Generator) -> np.ndarray:
        if self.distribution == "uniform":
            return rng.integers(0, self.vocab, self.n_ids, dtype=np.int64)
        ranks = np.arange(1, self.vocab + 1, dtype=np.float64)
        p = ranks**-ZIPF_EXPONENT
        return rng.choice(self.vocab, self.n_ids, p=p / p.sum()).astype(np.int64)  # id 0 the most frequent

    def output_bytes(self, operation: str) -> int:
        """Bytes of the result: the gathered rows, or the dense gradient table (as the operation defines it)."""
        rows = self.n_ids if operation == "embedding_forward" else self.vocab
        return rows * self.dim * ITEM

    def input_bytes(self, operation: str) -> int:
        upstream = self.n_ids * self.dim * ITEM if operation == "embedding_backward" else 0
        return self.vocab * self.dim * ITEM + self.n_ids * ID_ITEM + upstream

    def minimum_bytes(self, operation: str) -> int:
        """What the operation must move at least: forward reads N rows and writes N rows; backward reads
        the upstream gradient and writes the V x D gradient table; both read the ids."""
        rows = self.n_ids * self.dim * ITEM
        if operation == "embedding_forward":
            return 2 * rows + self.n_ids * ID_ITEM
        return rows + self.output_bytes(operation) + self.n_ids * ID_ITEM

    def needed_bytes(self, operation: str) -> int:
        """Memory a call needs at least while it runs: its inputs and its output."""
        return self.input_bytes(operation) + self.output_bytes(operation)


def workloads(sizes: tuple[str, ...] = DEFAULT_SIZES) -> list[Workload]:
    """Every named size with both distributions, in order; UnknownSize for a name not in SIZES."""
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        raise UnknownSize(f"unknown size {unknown[0]!r}; known sizes: {', '.join(SIZES)}")
    return [Workload(s, *SIZES[s][:3], d) for s in dict.fromkeys(sizes) for d in DISTRIBUTIONS]
