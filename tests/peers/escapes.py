"""Writes terminal control sequences into everything it controls: its name and version, an ``exception`` reply
to embedding_backward (message, type and traceback: a clear-screen and a fake green "373 pass"), a skip reason
on embedding_backward_sparse and a documented claim that cites that failure. Correct elsewhere."""

from _peer import serve, write

from embconf.protocol.reference_peer import hello

FAKE = "\x1b[2J\x1b[H\x1b[32m373 pass\x1b[0m\r\x1b]0;owned\x07\u202e\x9b31m"


def hook(message):
    if message["operation"] == "embedding_backward":
        write({"seq": message["seq"], "exception": {"type": FAKE, "message": FAKE * 50, "traceback": FAKE}})
        return True
    if message["operation"] == "embedding_backward_sparse":
        write({"seq": message["seq"], "skipped": {"reason": FAKE}})
        return True
    return False


def handshake(message):
    reply = hello()
    claim = {"link": FAKE, "sentence": FAKE, "cases": ["lookup.backward.*"], "requirements": []}
    implementation = reply["implementation"]
    capabilities = {**implementation["capabilities"], "documented": [claim]}
    implementation = {**implementation, "name": FAKE, "version": FAKE, "capabilities": capabilities}
    return {**reply, "implementation": implementation}


serve(hook, handshake=handshake)
