"""The protocol's messages (spec/PROTOCOL.md) as frozen dataclasses.

The runner writes :class:`StartRequest`, :class:`RunRequest` and :class:`StopRequest` (``wire()`` is the
JSON object sent). It reads a :class:`StartReply` and, per request, one of the run-reply forms
:class:`Outputs`, :class:`Error`, :class:`Skipped` or (since minor 2) :class:`Raised`, each parsed once from the decoded JSON and checked:
a message that is not the one expected is a :class:`ProtocolError`; a run reply framed right whose
content cannot be used is a :class:`BadReply`, one line saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from embconf.model.contract import (
    ALL_ROWS,
    NO_INSTANCE,
    STATEFUL,
    Capabilities,
    DocumentedChoice,
    contradictory_features,
)
from embconf.model.convention import claimable_features, read_declared
from embconf.model.encoding import ARRAY_DTYPES, EncodingError
from embconf.model.vocabulary import error_kinds, features, operations, output_names, spec_version
from embconf.protocol.codec import INSTANCES_MINOR, PROTOCOL_MINOR, PROTOCOL_VERSION, from_wire, to_wire
from embconf.protocol.lines import ProtocolError

RUN_REPLY_FORMS = ("outputs", "error", "skipped", "exception")  # "exception": since minor 2


# ----- what the runner writes


@dataclass(frozen=True)
class StartRequest:
    """``start``: the runner's protocol and spec versions, and the array dtypes and features it knows."""

    spec_version: str
    dtypes: tuple[str, ...]
    features: tuple[str, ...]

    @classmethod
    def of_this_runner(cls) -> StartRequest:
        """The start request this runner sends."""
        return cls(spec_version(), tuple(ARRAY_DTYPES), tuple(sorted(features())))

    def wire(self) -> dict[str, Any]:
        return {
            "cmd": "start",
            "protocol": PROTOCOL_VERSION,
            "protocol_minor": PROTOCOL_MINOR,
            "spec_version": self.spec_version,
            "dtypes": list(self.dtypes),
            "features": list(self.features),
        }


@dataclass(frozen=True)
class RunRequest:
    """``run``: one call of ``operation``; its reply carries the same ``seq``."""

    seq: int
    operation: str
    inputs: Mapping[str, Any]
    rows: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # the rows of an output judged (minor 4)
    instance: int = NO_INSTANCE  # the instance the call is made on (minor 5; 0: none, not written)

    def wire(self) -> dict[str, Any]:
        message = {"cmd": "run", "seq": self.seq, "operation": self.operation, "inputs": to_wire(self.inputs)}
        if self.rows:
            message["rows"] = {name: list(rows) for name, rows in self.rows.items()}
        if self.instance != NO_INSTANCE:
            message["instance"] = self.instance
        return message


@dataclass(frozen=True)
class StopRequest:
    """``stop``: the run is over; the peer exits (the end of its stdin means the same)."""

    def wire(self) -> dict[str, Any]:
        return {"cmd": "stop"}


Request = Union[StartRequest, RunRequest, StopRequest]


def outputs_reply(seq: int, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """A run reply carrying an operation's ``outputs`` as a peer writes it (spec/schemas/protocol-run-reply)."""
    return {"seq": seq, "outputs": {name: to_wire(value) for name, value in outputs.items()}}


def start_message() -> dict[str, Any]:
    """The start request this runner sends, as written on the wire."""
    return StartRequest.of_this_runner().wire()


def run_message(seq: int, operation: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A run request as written on the wire."""
    return RunRequest(seq, operation, inputs).wire()


STOP_MESSAGE: dict[str, Any] = StopRequest().wire()


# ----- the start reply


@dataclass(frozen=True)
class PeerImplementation:
    """Who answered the start request, and what it provides."""

    name: str
    version: str
    language: str
    capabilities: Capabilities

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "language": self.language}


@dataclass(frozen=True)
class StartReply:
    """The start reply: the protocol the peer speaks and the implementation behind it."""

    protocol: int
    implementation: PeerImplementation
    minor: int = 0  # the protocol minor version it speaks


def parse_start_reply(message: Any, validate: bool = False) -> StartReply:
    """The start reply ``message`` stands for; ProtocolError (one line) unless it is a usable start reply
    of this protocol version (checked against its schema when ``validate``)."""
    try:
        _check_start_reply(message, validate)
        impl = message["implementation"]
        caps = impl["capabilities"]
        minor = message.get("protocol_minor", 0)
        minor = minor if isinstance(minor, int) and not isinstance(minor, bool) else 0
        capabilities = Capabilities(
            frozenset(caps["operations"]),
            frozenset(caps.get("features", [])) - ({STATEFUL} if minor < INSTANCES_MINOR else set()),
            documented=tuple(DocumentedChoice.from_plain(item) for item in caps.get("documented", [])),
            conventions=read_declared(caps),
        )
        named = [str(impl.get(key, "")) for key in ("name", "version", "language")]
        return StartReply(message["protocol"], PeerImplementation(named[0], named[1], named[2], capabilities), minor)
    except RecursionError:
        raise ProtocolError("a start reply nested too deeply to read") from None
    except ValueError as exc:  # a convention's declaration the schema let through (a point's parameters, EMB-SIN-6)
        raise ProtocolError(f"bad start reply: {exc}") from None


def _check_start_reply(message: Any, validate: bool) -> None:
    if not isinstance(message, dict) or "protocol" not in message:
        raise ProtocolError(f"expected a start reply with 'protocol' and 'implementation', got {str(message)[:200]!r}")
    if message["protocol"] != PROTOCOL_VERSION:
        raise ProtocolError(
            f"it speaks protocol {message['protocol']!r}; this runner speaks protocol {PROTOCOL_VERSION}"
        )
    problem = schema_problem("start-reply", message) if validate else _start_reply_problem(message)
    if problem:
        raise ProtocolError(f"bad start reply: {problem}")


def _start_reply_problem(message: dict[str, Any]) -> Optional[str]:
    """What the runner cannot use in a start reply it does not validate against the schema, or None."""
    impl = message.get("implementation")
    if not isinstance(impl, dict) or not isinstance(impl.get("name"), str):
        return "'implementation' must be an object with a 'name'"
    caps = impl.get("capabilities")
    if not isinstance(caps, dict) or not _strings(caps.get("operations")) or not _strings(caps.get("features", [])):
        return (
            "'implementation.capabilities' must be an object with an 'operations' list (and a 'features' list) of names"
        )
    unknown = [op for op in caps["operations"] if op not in operations()]
    unknown += [f for f in caps.get("features", []) if f not in _plain_features()]
    if unknown:
        return (
            f"unknown operation or feature name(s) {unknown} (see spec/vocabulary.json; a convention is declared "
            "in its own field of the capabilities, PROTOCOL.md section 2)"
        )
    contradiction = contradictory_features(caps.get("features", []))
    if contradiction:
        return contradiction
    if not _documented_ok(caps.get("documented", [])):
        return "'capabilities.documented' must be a list of objects with a 'link' and a 'sentence' (and 'cases', 'requirements' lists of strings)"
    try:
        Capabilities(frozenset(), conventions=read_declared(caps))
    except ValueError as exc:
        return str(exc)
    return None


def _documented_ok(value: Any) -> bool:
    """Whether ``value`` is a usable list of documented choices (minor 2): each one DocumentedChoice reads."""
    try:
        return isinstance(value, list) and all(DocumentedChoice.from_plain(item) for item in value)
    except ValueError:
        return False


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _plain_features() -> set[str]:
    return set(claimable_features())


# ----- run replies


@dataclass(frozen=True)
class Outputs:
    """The call's outputs, by name, as the runner compares them (arrays decoded)."""

    seq: int
    values: dict[str, Any]


@dataclass(frozen=True)
class Error:
    """The implementation rejected the call with an error ``kind`` of the spec's taxonomy."""

    seq: int
    kind: str
    message: str


@dataclass(frozen=True)
class Skipped:
    """The implementation declined the call."""

    seq: int
    reason: str


@dataclass(frozen=True)
class Raised:
    """Since minor 2: the implementation failed with an exception that names no error kind (the outcome
    ``error``), and keeps running: ``type`` and ``traceback`` are the peer's own words, possibly empty."""

    seq: int
    type: str
    message: str
    traceback: str

    def describe(self) -> str:
        """'raised TypeError: ...', as an in-process exception reads."""
        return f"raised {self.type or 'an exception'}: {self.message}"


RunReply = Union[Outputs, Error, Skipped, Raised]


class BadReply(Exception):
    """A run reply to the right request whose content cannot be used; the message says why, in one line."""


def parse_run_reply(
    message: Any, seq: int, operation: str, validate: bool = False, rows: Mapping[str, tuple[int, ...]] = ALL_ROWS
) -> RunReply:
    """The run reply ``message`` stands for, as the reply to request ``seq`` (a call of ``operation``, which
    asked for ``rows`` of its outputs: an output may hold those rows only).

    ProtocolError when it is not a reply to that request; BadReply when its content cannot be used
    (checked against the schema and the operation's output names when ``validate``)."""
    try:
        form = _run_reply_form(message, seq)
        if validate:
            problem = schema_problem("run-reply", message) or output_names_problem(message, operation)
            if problem:
                raise BadReply(f"protocol violation: {problem}")
        body = message[form]
        if form == "skipped":
            return Skipped(seq, str(body.get("reason", "")))
        if form == "exception":
            named = [str(body.get(key) or "") for key in ("type", "message", "traceback")]
            return Raised(seq, named[0], named[1], named[2])
        if form == "error":
            if body["kind"] not in error_kinds():
                raise BadReply(
                    f"unknown error kind {body['kind']!r} (not in the spec's taxonomy): {body.get('message', '')}"
                )
            return Error(seq, body["kind"], str(body.get("message", "")))
        return Outputs(seq, _decoded(body, rows))
    except RecursionError:
        raise ProtocolError("a reply nested too deeply to read") from None


def _run_reply_form(message: Any, seq: int) -> str:
    """Which of outputs/error/skipped a run reply holds; ProtocolError when it is not a reply to ``seq``."""
    if not isinstance(message, dict):
        raise ProtocolError(f"a reply must be a JSON object, got {type(message).__name__}")
    got = message.get("seq")
    if not isinstance(got, int) or isinstance(got, bool) or got != seq:
        raise ProtocolError(f"reply carries seq {message.get('seq')!r}, expected {seq}")
    forms = [key for key in RUN_REPLY_FORMS if key in message]
    if len(forms) != 1:
        raise ProtocolError(
            f"a reply holds exactly one of 'outputs', 'error', 'skipped', 'exception'; got keys {sorted(message)}"
        )
    body = message[forms[0]]
    if not isinstance(body, dict):
        raise ProtocolError(f"'{forms[0]}' must be an object, got {type(body).__name__}")
    if forms[0] == "error" and not isinstance(body.get("kind"), str):
        raise ProtocolError("an error reply needs a string 'kind' from the spec's taxonomy")
    return forms[0]


def _decoded(body: dict[str, Any], rows: Mapping[str, tuple[int, ...]]) -> dict[str, Any]:
    """The outputs of a reply decoded (:func:`from_wire`); BadReply naming the first that cannot be."""
    outputs = {}
    for name, value in body.items():
        try:
            outputs[name] = from_wire(value, rows.get(name))
        except EncodingError as exc:
            raise BadReply(f"malformed array in output '{name}': {exc}") from None
        except TypeError as exc:
            raise BadReply(f"output '{name}': {exc}") from None
    return outputs


def schema_problem(name: str, message: Any) -> Optional[str]:
    """The first violation of ``spec/schemas/protocol-<name>.schema.json``, or None."""
    from embconf.model.schemas import validator

    error = next(iter(validator(f"protocol-{name}").iter_errors(message)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message[:300]} at /{where}"


def output_names_problem(message: dict[str, Any], operation: str) -> Optional[str]:
    """How the outputs of a reply differ from the names ``operation`` returns, or None."""
    if "outputs" not in message or not isinstance(message["outputs"], dict):
        return None
    wanted, got = output_names(operation), sorted(message["outputs"])
    return None if sorted(wanted) == got else f"{operation} returns outputs {wanted}, the reply has {got}"
