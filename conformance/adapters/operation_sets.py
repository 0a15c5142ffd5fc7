"""The adapters' operation sets, keyed by the spec's area: the class a framework adapter's part derives from to
serve one family's operations with the glue written once (the spec's checks, the inputs a framework takes in
another form, typed errors), or None where a framework adapter simply has one method per operation, named as the
operation (:class:`~embconf.adapters.frameworks.FrameworkAdapter`). A new family adds its row
(docs/maintainers.md, "Adding an operation family")."""

from __future__ import annotations

from typing import Optional

from embconf.adapters.bags import BagOperations
from embconf.adapters.quantized_ops import QuantizedOperations
from embconf.adapters.rope_operations import RopeOperations

OPERATION_SETS: dict[str, Optional[type]] = {
    "token_lookup": None,
    "sinusoidal": None,
    "learned_positions": None,
    "embedding_layer": None,
    "memory": None,
    "rope": RopeOperations,  # rope_tables, rope_forward, rope_backward over a framework's rotation and gradient
    "bags": BagOperations,  # the bag lookups over a framework's forward and backward; offsets read into bags
    "quantized": QuantizedOperations,  # formats read by name, the bytes checked against them; hooks per operation
}
