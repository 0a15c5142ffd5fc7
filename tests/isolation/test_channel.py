"""What the runner unpickles from a worker: replies only (the allow-list of ``embconf.isolation.channel``)."""

from __future__ import annotations

import pickle

import pytest

from embconf.isolation.channel import load_reply
from embconf.model.contract import Capabilities, Reason, Reply, Status
from embconf.processes.failures import Garbled


class _ByGetattr:
    """Pickles as ``getattr(owner, name)``: how some Python releases (Debian's 3.11.2) pickle an enum member."""

    def __init__(self, owner: object, name: str) -> None:
        self.owner, self.name = owner, name

    def __reduce__(self):
        return getattr, (self.owner, self.name)


def test_enum_members_pickled_by_getattr_are_read_back():
    reply = Reply(Status.OUTPUTS, outputs={"bytes": 48})
    message = ("reply", reply, False, _ByGetattr(Status, "STOPPED"), _ByGetattr(Reason, "CASE_TIMEOUT"))
    loaded = load_reply(pickle.dumps(message, protocol=5))
    assert loaded[1].status is Status.OUTPUTS and loaded[1].outputs == {"bytes": 48}
    assert loaded[3] is Status.STOPPED and loaded[4] is Reason.CASE_TIMEOUT


@pytest.mark.parametrize(
    "owner, name",
    [(Reply, "__init__"), (Capabilities, "from_plain"), (Status, "__class__"), (Status, "NO_SUCH_MEMBER")],
)
def test_getattr_rebuilds_nothing_but_a_member_of_the_replys_enums(owner, name):
    with pytest.raises(Garbled, match="builtins.getattr"):
        load_reply(pickle.dumps(("reply", _ByGetattr(owner, name), False), protocol=5))
