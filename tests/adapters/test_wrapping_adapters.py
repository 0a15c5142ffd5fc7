"""The adapters that hold another to a rule (the input guard, the hang policy) are that adapter to the session:
named, described, claimed and closed as it is, every call made through their ``call_on``; and an adapter that
keeps objects for the calls on one instance makes each call on it inside its ``instances`` (spec section 9.7)."""

from __future__ import annotations

from typing import Any

import pytest

from embconf.adapters.base import AdapterBase, WrappingAdapter
from embconf.adapters.guard import GuardedAdapter
from embconf.adapters.instances import CallsOnInstances, Instances
from embconf.isolation.hangs import with_hang_policy
from embconf.model.contract import NO_INSTANCE, Capabilities, OnInstances, Reply, Status, call_on_instance


class Counting(CallsOnInstances, AdapterBase):
    """Answers with the number of calls made on the object it keeps (1 on a fresh one), and records its close."""

    kind, target = "counting", "one"

    def __init__(self) -> None:
        self.instances: Instances[list[int]] = Instances()
        self.closed = False

    def describe(self) -> dict[str, Any]:
        return {"name": "counting", "version": "7", "language": "python"}

    def capabilities(self) -> Capabilities:
        return Capabilities(frozenset({"embedding_forward"}), frozenset({"float16"}))

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        calls, _ = self.instances.get(list)
        calls.append(1)
        return Reply(Status.OUTPUTS, outputs={"output": len(calls)})

    def close(self) -> None:
        self.closed = True


WRAPPERS = {"guard": GuardedAdapter, "hang policy": with_hang_policy}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=list(WRAPPERS))
def test_a_wrapper_is_its_adapter_to_the_session(wrap):
    inner = Counting()
    wrapped = wrap(inner)
    assert isinstance(wrapped, WrappingAdapter) and wrapped.inner is inner
    assert (wrapped.kind, wrapped.target) == ("counting", "one")
    assert wrapped.describe() == inner.describe() and wrapped.capabilities() == inner.capabilities()
    wrapped.close()
    assert inner.closed


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=list(WRAPPERS))
def test_a_wrapper_passes_the_instance_on(wrap):
    wrapped = wrap(Counting())
    answers = [call_on_instance(wrapped, 3, "embedding_forward", {}).outputs["output"] for _ in range(3)]
    fresh = [wrapped.call("embedding_forward", {}).outputs["output"] for _ in range(2)]
    assert (answers, fresh) == ([1, 2, 3], [1, 1])


def test_calls_on_an_instance_share_its_object_and_a_call_on_none_is_fresh():
    adapter = Counting()
    assert isinstance(adapter, OnInstances)
    on_one = [adapter.call_on(5, "embedding_forward", {}).outputs["output"] for _ in range(2)]
    on_none = adapter.call_on(NO_INSTANCE, "embedding_forward", {}).outputs["output"]
    on_another = adapter.call_on(6, "embedding_forward", {}).outputs["output"]
    assert (on_one, on_none, on_another) == ([1, 2], 1, 1)


class KeepsNothing(CallsOnInstances, AdapterBase):
    """An adapter whose target keeps no objects (a transformers table): ``instances`` stays None."""

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return Reply(Status.OUTPUTS, outputs={"output": operation})


def test_an_adapter_that_keeps_nothing_makes_its_plain_call_on_an_instance():
    reply = KeepsNothing().call_on(5, "embedding_forward", {})
    assert (reply.status, reply.outputs) == (Status.OUTPUTS, {"output": "embedding_forward"})
