"""tests/impls/bag_float32.py as TensorFlow's safe_embedding_lookup_sparse answers: negative ids and weights <= 0
dropped (EMB-BAG-V1, V2), both conventions declared."""

import bag_float32

EMBCONF_FEATURES = bag_float32.EMBCONF_FEATURES
EMBCONF_BAG_CONVENTIONS = ["drop_negative_ids", "prune_nonpositive_weights"]
sharded_table_bytes = bag_float32.sharded_table_bytes


def embedding_bag_forward(weight, ids, offsets, mode, **options):
    return bag_float32.forward(weight, ids, offsets, mode, **options, conventions=EMBCONF_BAG_CONVENTIONS)


def embedding_bag_backward(weight, ids, offsets, mode, grad_output, **options):
    return bag_float32.backward(weight, ids, offsets, mode, grad_output, **options, conventions=EMBCONF_BAG_CONVENTIONS)
