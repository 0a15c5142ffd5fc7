"""``torchrec`` / ``torchrec:fused``: TorchRec's ``EmbeddingBagCollection`` (unsharded, on the CPU, with FBGEMM's CPU
operators installed as ``fbgemm-gpu-cpu``), its gradients by torch autograd, or its ``FusedEmbeddingBagCollection``
(FBGEMM's table-batched kernel, ``SplitTableBatchedEmbeddingBagsCodegen``, on the CPU), against the spec's bags.

What is TorchRec's and what is the adapter's:

- One table (``EmbeddingBagConfig(name="t", num_embeddings=V, embedding_dim=D, feature_names=["f"],
  pooling=PoolingType.SUM or MEAN)``) in ``EmbeddingBagCollection(tables, is_weighted=weights given,
  device="cpu")``, its weight set to the case's table; called on the ``KeyedJaggedTensor(keys=["f"],
  values=ids, offsets=..., weights=...)`` of the case's bags, its output ``KeyedTensor``'s values read.
  A KeyedJaggedTensor's offsets always end with N: the case's ``include_last_offset`` offsets go in as they are,
  other offsets with N appended (the adapter's only glue besides naming the pooling: the mode ``max`` or an
  unknown one has no ``PoolingType``, and an ``include_last_offset`` that is not a bool, both refused as
  ``invalid_config`` by the glue).
- Declared: modes sum and mean, weights in sum (``is_weighted``), ``include_last_offset``, int32 ids. TorchRec
  pools with PyTorch's ``nn.EmbeddingBag`` on the CPU, so PyTorch's refusals are mapped as for ``torch_bag``
  (:func:`~embconf.adapters.torch_bag.bag_errors`); weights with mean stay PyTorch's ``NotImplementedError`` (so
  ``bag-weighted-mean`` is not declared). It has no max or sqrtn pooling, no ``padding_idx`` and no 2-D form;
  it casts every pooled output to float32 (``.float()``), so no other dtype is declared.
- ``torchrec:fused`` builds ``FusedEmbeddingBagCollection(tables, optimizer_type=torch.optim.SGD,
  optimizer_kwargs={"lr": 1.0})``: FBGEMM fuses the table's backward into the optimizer (no ``.grad``), so the
  table's gradient is read as the step exact SGD with learning rate 1 takes from a zero table (0 - g: exact; the
  gradient of sum and mean does not depend on the table); the weights' gradient is autograd's, on the case's table.
  FBGEMM takes widths that are multiples of 4 (another is declined) and checks ids and offsets in its default
  bounds-check mode WARNING, which logs and adjusts them (:data:`BOUNDS_WARNING`, documented).
- ``sharded_table_bytes`` (``bag-sharding``): the shard sizes of TorchRec's own planner function
  ``calculate_shard_sizes_and_offsets(table, shards, shards, sharding, col_wise_shard_dim=ceil(D / shards))`` on a
  meta tensor, times the dtype's element size (the glue's only arithmetic). Its row-wise shards are the spec's
  (blocks of ceil(V / S) rows, the last ones short or empty). Measured: a column-wise block must be a multiple of 4
  that divides D, else TorchRec keeps the whole table as one shard (with a warning), and ``table_wise`` is one of
  its sharding types (:data:`TABLE_WISE`, documented), not an unknown one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from embconf.adapters.bags import OPERATIONS, BagCall
from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, package_version, refusals
from embconf.adapters.torch_bag import Pool, PooledBags, TorchBags, bag_errors
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError
from embconf.reference.memory import element_size
from embconf.reference.options import check_flag  # the spec's rule for a flag (EMB-BAG-13)

EXTRA = "torchrec"
NEEDS = (
    ", then pip install --no-deps torchrec (its CUDA fbgemm-gpu would replace the CPU operators; fbgemm-gpu-cpu must"
    " be the release built for the installed torch: 1.8 for torch 2.13)"
)
FEATURES = frozenset({"bag-sum", "bag-mean", "bag-weights", "bag-last-offset", "bag-sharding", "int32_ids"})
SHARDING = "sharded_table_bytes"
POOLINGS = {"sum": "SUM", "mean": "MEAN"}
TARGETS = {"": "EmbeddingBagCollection", "fused": "FusedEmbeddingBagCollection"}
BOUNDS_WARNING = DocumentedChoice(
    "https://pytorch.org/FBGEMM/fbgemm_gpu-python-api/table_batched_embedding_ops.html",
    "FBGEMM's table-batched embedding runs with bounds_check_mode=BoundsCheckMode.WARNING by default: ids and "
    "offsets out of bounds are logged and adjusted (an id outside the table is read as row 0), not refused "
    "(BoundsCheckMode.FATAL would refuse them).",
    requirements=("EMB-BAG-13",),
)
TABLE_WISE = DocumentedChoice(
    "https://pytorch.org/torchrec/concepts.html",
    "TorchRec's sharder shards a table data-parallel, table-wise, row-wise, table-wise-row-wise or column-wise: "
    "'table_wise' (the whole table on one rank) is one of its sharding types, where the spec names only row_wise "
    "and column_wise.",
    cases=("bag.memory.unknown_sharding",),
)


class TorchRecAdapter(PooledBags, FrameworkAdapter):
    kind = "torchrec"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        self.torchrec = import_framework("torchrec", EXTRA, NEEDS)
        self.fused = target == "fused"
        self.bags = TorchBags(torch)
        notes = (f"{TARGETS[target]}, unsharded, CPU",)
        documented = (TABLE_WISE, BOUNDS_WARNING) if self.fused else (TABLE_WISE,)
        caps = Capabilities(OPERATIONS | {SHARDING}, FEATURES, notes=notes, documented=documented)
        super().__init__(
            f"torchrec:{target}" if target else "torchrec", self.torchrec, caps, f"TorchRec {TARGETS[target]}"
        )
        self._version = package_version("torchrec") or self._version

    def _collection(self, config: Any, weighted: bool) -> Any:
        torchrec, torch = self.torchrec, self.bags.torch
        if not self.fused:
            return torchrec.EmbeddingBagCollection(tables=[config], is_weighted=weighted, device="cpu")
        from torchrec.modules.fused_embedding_modules import FusedEmbeddingBagCollection

        if config.embedding_dim % 4:
            raise Decline(
                f"FBGEMM's table-batched kernel takes widths that are multiples of 4, not {config.embedding_dim}"
            )
        return FusedEmbeddingBagCollection(
            tables=[config], optimizer_type=torch.optim.SGD, optimizer_kwargs={"lr": 1.0}, is_weighted=weighted
        )

    def _pool(self, call: BagCall) -> Pool:
        torchrec, torch = self.torchrec, self.bags.torch
        call.decline_absent("TorchRec", last_offset=False)
        with glue_checks():  # TorchRec takes no such flag: reading it is the glue's
            last_offset = check_flag("include_last_offset", call.include_last_offset)
        if call.mode not in POOLINGS:
            with glue_checks():
                raise EmbeddingError("invalid_config", f"TorchRec has no {call.mode!r} pooling (PoolingType SUM, MEAN)")

        def pool(table: Any, ids: Any, offsets: Any, weights: Any) -> tuple[Any, Any]:
            config = torchrec.EmbeddingBagConfig(
                name="t",
                num_embeddings=table.shape[0],
                embedding_dim=table.shape[1],
                feature_names=["f"],
                pooling=getattr(torchrec.PoolingType, POOLINGS[call.mode]),
            )
            collection = self._collection(config, weights is not None)
            # the parameter autograd fills, or the fused table FBGEMM's optimizer steps (a view of its weights)
            stored = (
                collection.state_dict()["embedding_bags.t.weight"]
                if self.fused
                else collection.embedding_bags["t"].weight
            )
            with torch.no_grad():
                stored.copy_(table)
            if offsets is not None and not last_offset:  # a KeyedJaggedTensor's offsets end with N
                offsets = torch.cat([offsets, torch.tensor([ids.shape[0]], dtype=offsets.dtype)])
            features = torchrec.KeyedJaggedTensor(keys=["f"], values=ids, offsets=offsets, weights=weights)
            return collection(features).values(), stored  # the fused table's update writes into stored

        return pool

    def sharded_table_bytes(self, vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str) -> Any:
        """The bytes of each shard TorchRec's planner cuts (``calculate_shard_sizes_and_offsets``) a (V, D) table of
        ``dtype`` into for ``shards`` ranks (a meta tensor: nothing is allocated); ``column_wise`` asks for blocks of
        ceil(D / shards) columns (its ``col_wise_shard_dim``)."""
        from torchrec.distributed.sharding_plan import calculate_shard_sizes_and_offsets

        torch = self.bags.torch
        with glue_checks():  # the glue turns the dtype's name into a torch dtype: TorchRec never sees the name
            element_size(dtype)
        table = torch.empty((vocab_size, embed_dim), dtype=getattr(torch, dtype), device="meta")
        block = -(-embed_dim // shards) if shards > 0 else None  # no block for no shards: TorchRec's to judge
        with refusals(ValueError, ("Unrecognized or unsupported sharding type", "invalid_config")):
            sizes, _ = calculate_shard_sizes_and_offsets(table, shards, shards, sharding, col_wise_shard_dim=block)
        return np.array([rows * columns * table.element_size() for rows, columns in sizes], dtype=np.int64)

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        grad_table, grad_weights = super().backward(call, grad_output)
        return (self._fused_gradient(call, grad_output) if self.fused else grad_table), grad_weights

    def _fused_gradient(self, call: BagCall, grad_output: np.ndarray) -> Any:
        """FBGEMM fuses the table's gradient into its optimizer: the step exact SGD (lr 1) takes from a zero table
        is minus the gradient, exactly (0 - g)."""
        bags, zero = self.bags, replace(call, weight=np.zeros_like(call.weight))
        inputs = [bags.tensor(a) for a in (zero.weight, zero.ids, zero.offsets, zero.per_sample_weights)]
        with bag_errors():
            output, stepped = self._pool(zero)(*inputs)
            output.backward(bags.tensor(grad_output))
        return to_numpy(bags.torch.zeros_like(stepped) - stepped.detach())  # 0 - (0 - g); +0.0 where no step
