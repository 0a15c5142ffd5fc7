"""Learned position table cases: x + P[s:s+T], its gradients, and the input checks."""
from __future__ import annotations

from embconf.reference.cases import CaseSpec, table, values

AREA = "learned_positions"


def _case(case_id: str, description: str, reqs: tuple[str, ...], max_len: int, x_shape: tuple[int, ...],
          start_pos: object = 0, backward: bool = False, dtype: str = "float32", error: str | None = None,
          features: tuple[str, ...] = (), table_dim: int | None = None) -> CaseSpec:
    dim = table_dim if table_dim is not None else x_shape[-1]
    inputs = {"table": table(case_id, max_len, dim, dtype), "x": values(case_id, x_shape, dtype, "x"), "start_pos": start_pos}
    if backward:
        inputs["grad_output"] = values(case_id, x_shape, dtype, "grad")
    operation = "learned_positions_backward" if backward else "learned_positions_forward"
    return CaseSpec(case_id, description, reqs, operation, inputs, features, error=error)


def cases() -> list[CaseSpec]:
    fwd, bwd = ("EMB-POS-1",), ("EMB-POS-3", "EMB-POS-4")
    start = ("EMB-POS-2",)
    shape, len_err, pos_err = ("EMB-POS-5", "EMB-ERR-1"), ("EMB-POS-6", "EMB-ERR-1"), ("EMB-POS-7", "EMB-ERR-1")
    return [
        _case("pos.forward.batch1", "One sequence: x + P[0:T].", fwd, 16, (1, 5, 4)),
        _case("pos.forward.batch3", "Three sequences share the same position rows (broadcast over the batch).", fwd, 16, (3, 5, 4)),
        _case("pos.forward.start_pos_3", "start_pos 3 adds rows 3..3+T-1.", fwd + start, 16, (2, 4, 3), start_pos=3),
        _case("pos.forward.start_at_end", "start_pos + T == L exactly: the last rows, no error.", fwd + start + ("EMB-POS-6",), 10, (2, 4, 3), start_pos=6),
        _case("pos.forward.full_table", "T == L from 0: the whole table.", fwd, 6, (2, 6, 3)),
        _case("pos.forward.seq_1", "T = 1 at start_pos 7.", fwd + start, 8, (4, 1, 5), start_pos=7),
        _case("pos.forward.table_len_1", "A one-row table.", fwd, 1, (3, 1, 2)),
        _case("pos.forward.dim_1", "D = 1.", fwd, 12, (2, 5, 1), start_pos=2),
        _case("pos.forward.dim_7", "Odd D = 7.", fwd, 20, (2, 9, 7), start_pos=5),
        _case("pos.forward.large", "(4, 64, 32) over a 128-row table from start_pos 50.", fwd + start, 128, (4, 64, 32), start_pos=50),
        _case("pos.forward.empty_seq", "T = 0: an empty result.", fwd, 4, (2, 0, 3)),
        _case("pos.forward.float64", "float64 table and input.", fwd + ("EMB-FWD-4",), 8, (2, 3, 4), start_pos=1, dtype="float64", features=("float64",)),
        _case("pos.backward.batch1", "grad_x is G; rows 0..T-1 of grad_P are G; the rest exactly zero.", bwd, 16, (1, 5, 4), backward=True),
        _case("pos.backward.batch3", "grad_P rows are the sum of G over the batch of 3.", bwd, 16, (3, 5, 4), backward=True),
        _case("pos.backward.start_pos_3", "start_pos 3: only rows 3..3+T-1 get gradient.", bwd + start, 16, (2, 4, 3), start_pos=3, backward=True),
        _case("pos.backward.start_at_end", "The last rows get gradient, the first stay zero.", bwd + start, 10, (2, 4, 3), start_pos=6, backward=True),
        _case("pos.backward.full_table", "T == L: every row gets gradient.", bwd, 6, (2, 6, 3), backward=True),
        _case("pos.backward.batch8", "A batch of 8 summed per row.", bwd, 12, (8, 5, 4), start_pos=2, backward=True),
        _case("pos.backward.seq_1", "T = 1 at start_pos 7.", bwd + start, 8, (4, 1, 5), start_pos=7, backward=True),
        _case("pos.backward.large", "(4, 64, 32) over a 128-row table from start_pos 50.", bwd + start, 128, (4, 64, 32), start_pos=50, backward=True),
        _case("pos.backward.float64", "float64 gradients.", bwd + ("EMB-FWD-4",), 8, (2, 3, 4), start_pos=1, backward=True, dtype="float64", features=("float64",)),
        _case("pos.error.x_2d", "A 2-D x (seq, D) is not (batch, seq, D).", shape, 8, (5, 4), error="shape_mismatch"),
        _case("pos.error.x_4d", "A 4-D x.", shape, 8, (2, 2, 3, 4), error="shape_mismatch"),
        _case("pos.error.dim_mismatch", "x has D = 5, the table D = 4.", shape, 8, (2, 3, 5), error="shape_mismatch", table_dim=4),
        _case("pos.error.too_long", "start_pos + T == L + 1.", len_err, 10, (2, 5, 3), start_pos=6, error="sequence_too_long"),
        _case("pos.error.seq_longer_than_table", "T > L from position 0.", len_err, 4, (1, 5, 3), error="sequence_too_long"),
        _case("pos.error.start_past_end", "start_pos == L with T = 1.", len_err, 4, (1, 1, 3), start_pos=4, error="sequence_too_long"),
        _case("pos.error.start_negative", "start_pos -1: rejected, never a wrap to the end.", pos_err, 8, (1, 3, 2), start_pos=-1, error="invalid_start_pos"),
        _case("pos.error.start_fraction", "start_pos 1.5 is not an integer.", pos_err, 8, (1, 3, 2), start_pos=1.5, error="invalid_start_pos"),
        _case("pos.error.overflow_2_from_0", "T = L + 2 from position 0: two rows past the table (1.2.0).", len_err, 4, (1, 6, 3), error="sequence_too_long"),
        _case("pos.error.overflow_3_from_start", "start_pos 5, T = 6, L = 8: the window ends three rows past the table (1.2.0).", len_err, 8, (2, 6, 3), start_pos=5, error="sequence_too_long"),
        _case("pos.error.backward_too_long", "Backward rejects start_pos + T > L too.", len_err, 6, (1, 4, 2), start_pos=3, backward=True, error="sequence_too_long"),
    ]
