"""Wrong arrays: embedding_forward gets one value fewer than its shape needs (malformed);
embedding_backward a well-formed gradient missing its last row (a wrong shape)."""

from _peer import serve, write

from embconf.protocol.reference_peer import respond


def hook(message):
    reply = respond(message)
    if "outputs" not in reply or message["operation"] not in ("embedding_forward", "embedding_backward"):
        return False
    name, array = next(iter(reply["outputs"].items()))
    if message["operation"] == "embedding_forward":
        array = {"dtype": array["dtype"], "shape": array["shape"], "data": [0.0] * (max(_count(array["shape"]) - 1, 0))}
    else:
        array = {
            "dtype": array["dtype"],
            "shape": [array["shape"][0] - 1] + array["shape"][1:],
            "data": [0.0] * _count([array["shape"][0] - 1] + array["shape"][1:]),
        }
    write({"seq": message["seq"], "outputs": {name: array}})
    return True


def _count(shape):
    total = 1
    for n in shape:
        total *= n
    return total


serve(hook)
