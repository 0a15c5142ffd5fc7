"""Replies to embedding_backward with a 4 MiB line (the tests cap lines at 1 MiB with EMBCONF_MAX_LINE)."""

from _peer import backward, raw, serve


def hook(message):
    if backward(message):
        payload = "A" * (4 * 2**20)
        raw(
            f'{{"seq":{message["seq"]},"outputs":{{"grad_weight":{{"dtype":"float32","shape":[{2**20}],"base64":"{payload}"}}}}}}\n'.encode()
        )
        return True
    return False


serve(hook)
