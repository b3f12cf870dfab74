"""JSON-RPC messages as read from a client: one line of stdin, or one POSTed body of ``/mcp``.

Every message read gets an answer. :func:`read_line` gives the message the SDK takes, or the
JSON-RPC error that answers anything else: -32700 for text that is not JSON, -32600 for JSON
that is not a message the SDK accepts, -32602 for ``tools/call`` and ``tasks/*`` params of the
wrong shape.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.methods import MONOLITH_REQUESTS, SPEC_CLIENT_METHODS
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from taskloom.domain.common import parse_json
from taskloom.domain.errors import InvalidInput

MAX_MESSAGE = 4 * 1024 * 1024
"""The largest message read, in bytes: a POSTed body of ``/mcp`` (the SDK's own limit) or a
line of stdin."""


BOM = "\ufeff"


def too_long() -> types.JSONRPCError:
    """The answer to a message over :data:`MAX_MESSAGE` bytes (unread, so its id is unknown)."""
    return jsonrpc_error(None, types.INVALID_REQUEST, f"over {MAX_MESSAGE} bytes")


def read_line(line: str) -> SessionMessage | types.JSONRPCError:
    """The JSON-RPC message on one line of stdin, validated by the SDK's own model, or, for
    any other line, the error that answers it (a bare ``JSONRPCError``, where a client's
    own error response comes wrapped in a ``SessionMessage``).

    -32700 if the line is not JSON (id null); -32600 if it is JSON the model refuses (too
    deep, a lone surrogate escape, a number too long, not a JSON-RPC shape), with the
    request's id when there is one to send back. A request whose id is neither a string nor
    an integer is refused too: the model would take it for a notification, never answered.
    A byte order mark before the message is ignored, as JSON allows (a file saved by an
    editor that writes one starts with it)."""
    line = line.removeprefix(BOM)
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _refusal(line, exc.errors()[0])
    if isinstance(message, types.JSONRPCNotification) and "id" in _loads(line):
        return jsonrpc_error(None, types.INVALID_REQUEST, "id must be a string or an integer")
    if isinstance(message, types.JSONRPCRequest):
        refused = _refused_request(line, message)
        if refused is not None:
            return refused
    return SessionMessage(message)


TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
"""The Tasks extension's methods, each naming its task by ``params.taskId``."""


def _refused_request(line: str, request: types.JSONRPCRequest) -> types.JSONRPCError | None:
    """The error for a request the SDK would take wrongly or answer without a reason: a key
    given twice (``{"op": "list", "op": "add"}`` ran the add, where ``tool call`` refuses
    it), or params of the wrong shape (answered a bare -32602 "Invalid request parameters",
    which names nothing to fix)."""
    try:
        parse_json(line, "the request")
    except InvalidInput as exc:
        return jsonrpc_error(request.id, types.INVALID_REQUEST, exc.message)
    why = _wrong_params(request.method, request.params or {})
    return None if why is None else jsonrpc_error(request.id, types.INVALID_PARAMS, why)


def _wrong_params(method: str, params: dict[str, Any]) -> str | None:
    """What is wrong with the params of a request, if anything: ``tools/call`` and
    ``tasks/*`` (``tasks/update``'s ``inputResponses`` included) in a client's words, any
    other method of the spec as the SDK's own model of it says (``initialize`` without
    ``protocolVersion``, ``resources/read`` without ``uri``)."""
    if method in TASK_METHODS:
        task_id, responses = params.get("taskId"), params.get("inputResponses")
        if not isinstance(task_id, str):
            return f"params.taskId must be the task's id (text), not {_kind(task_id)}"
        if method == "tasks/update" and responses is not None and not isinstance(responses, dict):
            return f"params.inputResponses must be an object, not {_kind(responses)}"
        return None
    if method != "tools/call":
        return _model_refusal(method, params)
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        return f"params.name must be the tool's name (text), not {_kind(name)}"
    if arguments is not None and not isinstance(arguments, dict):
        why = f"params.arguments must be an object, not {_kind(arguments)}"
        if isinstance(arguments, str):
            why += " (send the arguments themselves, not their JSON text)"
        return why
    return _model_refusal(method, params)


def _model_refusal(method: str, params: dict[str, Any]) -> str | None:
    """The first thing the SDK's model of ``method`` refuses in ``params``, as the SDK checks
    them: a client's method of the spec only (the SDK answers any other "Method not
    found")."""
    if method not in SPEC_CLIENT_METHODS:
        return None
    try:
        request = {"method": method, "params": params}
        MONOLITH_REQUESTS[method].model_validate(request, by_name=False)
    except ValidationError as exc:
        return _located(exc.errors()[0], skip=0)
    return None


def _located(error: ErrorDetails, skip: int) -> str:
    """A validation error as ``where: why``, ``where`` its path past the first ``skip``
    parts (the name of the message kind tried, where there is one)."""
    where = ".".join(str(part) for part in error["loc"][skip:])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _kind(value: object) -> str:
    """A JSON value's kind, as a client's author names it."""
    if value is None:
        return "missing (or null)"
    names = {bool: "a boolean", str: "text", list: "a list", dict: "an object"}
    return names.get(type(value), "a number")


def _refusal(line: str, error: ErrorDetails) -> types.JSONRPCError:
    """The answer to ``line``, which the model refused with ``error`` (its first)."""
    try:
        value = _loads(line)
    except RecursionError:
        return jsonrpc_error(None, types.INVALID_REQUEST, "nested too deeply to read")
    except ValueError as exc:
        return jsonrpc_error(None, types.PARSE_ERROR, f"not JSON ({exc})")
    if error["type"] == "json_invalid":  # JSON Python reads but the model does not
        why = error["msg"].removeprefix("Invalid JSON: ")
        limits = "lone surrogate escapes, nesting over about 200 levels, numbers over 4300 digits"
        why = f"{why} (refused: {limits})"
        return jsonrpc_error(_request_id(value), types.INVALID_REQUEST, why)
    why = f"not a JSON-RPC message ({_located(error, skip=1)})"
    return jsonrpc_error(_request_id(value), types.INVALID_REQUEST, why)


def _loads(line: str) -> Any:
    """``line`` parsed by Python's json, which reads what the model refuses (lone surrogate
    escapes, deeper nesting); an integer over Python's digit limit reads as a float, so its
    line can still be answered. Raises ``ValueError`` if it is not JSON."""
    return json.loads(line, parse_int=_int_or_float)


def _int_or_float(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # more digits than Python converts
        return float(digits)


def _request_id(value: object) -> types.RequestId | None:
    """The id to answer a refused line with: a request's id, if it can be sent back.

    A response's id names one of the server's own requests, so an error for it is sent
    with id null; so is an id that is neither an integer nor UTF-8 text."""
    if not isinstance(value, dict) or "result" in value or "error" in value:
        return None
    request_id = value.get("id")
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        return request_id
    if isinstance(request_id, str) and _is_utf8(request_id):
        return request_id
    return None


def _is_utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_KINDS = {types.PARSE_ERROR: "Parse error", types.INVALID_PARAMS: "Invalid params"}


def jsonrpc_error(request_id: types.RequestId | None, code: int, why: str) -> types.JSONRPCError:
    kind = _KINDS.get(code, "Invalid request")
    error = types.ErrorData(code=code, message=f"{kind}: {why}")
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
