"""Configuration that plugs taskloom into coding agents, merged into what is already there.

``taskloom init claude-code|codex`` uses these: each function takes the current file content
and returns the new content and whether anything changed, so running it twice changes nothing
and settings the user wrote stay as they were. Only taskloom's own entries are added or
updated; an existing file that cannot be parsed is an error, never overwritten.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import PureWindowsPath
from typing import Any

from taskloom.cli import json_text
from taskloom.cli.program import PROGRAM_NAMES, program
from taskloom.domain.common import parse_json_object
from taskloom.domain.errors import InvalidInput
from taskloom.store import check_url
from taskloom.store.pg_url import redact, url_has_password

SERVER_NAME = "taskloom"
HOOK_EVENTS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}


def mcp_command(thread: str, agent: str, db: str | None, tools: str | None = None) -> list[str]:
    """The argv of the stdio MCP server for this thread and agent, serving ``tools`` (a
    profile or a list of names; the default profile when ``None``). A ``db`` with a password
    is refused: these files are often committed, and a hook's command line is on show in
    ``ps`` every time it runs. A ``db`` taskloom could not open is refused too: the agent's
    every call would fail on it; so is a choice of tools the server would refuse."""
    if tools is not None:
        from taskloom.tools.profiles import select
        from taskloom.tools.registry import BUILTIN_TOOLS

        select([t for t in BUILTIN_TOOLS if not t.host_only], tools)
    if db is not None:
        check_url(db)
    if db and url_has_password(db):
        raise InvalidInput(
            "--db holds a password, which would be written in clear into the agent's files"
            " and command lines: set TASKLOOM_URL in the agent's environment instead, and"
            " leave --db out"
        )
    args = [program(), "mcp", "--thread", thread, "--agent", agent]
    args += ["--tools", tools] if tools is not None else []
    return args + (["--db", db] if db else [])


def hook_command(
    event: str, agent: str, db: str | None, program: str = "taskloom", mcp: bool = False
) -> str:
    """The hook's command line; ``mcp``: the agent has taskloom's MCP server, so the prompt
    hook tells it to claim with the ``task_next`` tool rather than a shell command."""
    args = [program, "hook", HOOK_EVENTS[event], "--agent", agent]
    args += ["--db", db] if db else []
    return shlex.join(args + (["--mcp"] if mcp and event == "UserPromptSubmit" else []))


def _load_json(text: str, name: str) -> dict[str, Any]:
    """The file's JSON object; one with comments or a trailing comma (JSONC, which some
    editors and agents allow) is refused by where that is: written back as JSON, they would
    be lost."""
    try:
        return parse_json_object(text, name) if text.strip() else {}
    except InvalidInput:
        found = _jsonc(text)
        if found is None:
            raise
        raise InvalidInput(
            f"{name} has {found}: taskloom does not rewrite JSON with comments or trailing"
            " commas, which it would lose; remove them and run this again"
        ) from None


_JSONC = re.compile(r'"(?:[^"\\]|\\.)*"|//|/\*|,(?=\s*[}\]])', re.S)


def _jsonc(text: str) -> str | None:
    """``a comment at line N`` or ``a trailing comma at line N``: the first outside a string."""
    for found in _JSONC.finditer(text):
        if not found.group().startswith('"'):
            what = "a trailing comma" if found.group() == "," else "a comment"
            return f"{what} at line {text.count(chr(10), 0, found.start()) + 1}"
    return None


def _dump_json(data: dict[str, Any], original: str) -> str:
    """``data`` written over ``original``, which :func:`_load_json` has read already (see
    :func:`json_text.rewrite`)."""
    return json_text.rewrite(original, json.loads(original) if original.strip() else {}, data)


def merge_mcp_json(text: str, name: str, argv: list[str]) -> tuple[str, bool]:
    """Add or update the ``taskloom`` entry of an ``mcpServers`` JSON file."""
    data = _load_json(text, name)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{name}: `mcpServers` must be an object")
    entry, ours = servers.get(SERVER_NAME), _server_keys(argv)
    if _is_set(entry, ours):
        return text, False
    servers[SERVER_NAME] = {**entry, **ours} if isinstance(entry, dict) else ours
    return _dump_json(data, text), True


def _server_keys(argv: list[str]) -> dict[str, str | list[str]]:
    """The keys of an MCP server entry that are taskloom's: the rest (``env``, ``type``…)
    are the user's, kept as they are."""
    return {"command": argv[0], "args": argv[1:]}


def _is_set(entry: object, ours: dict[str, str | list[str]]) -> bool:
    return isinstance(entry, dict) and {key: entry.get(key) for key in ours} == ours


def merge_hooks_json(
    text: str, name: str, agent: str, db: str | None, mcp: bool = False
) -> tuple[str, bool]:
    """Put taskloom's prompt and session-start hooks in a hooks settings file (the shape
    Claude Code's settings.json and Codex's hooks.json share), once each: a taskloom hook
    already there for another agent or database is replaced, not joined by a second one. A
    program given by its path is kept: a user who wrote ``/opt/venv/bin/taskloom`` needs that
    path; a bare name is kept while it finds this program on PATH, else replaced by this
    program's path, as the MCP server's command is (see :func:`program`). ``mcp``: see
    :func:`hook_command`."""
    data = _load_json(text, name)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{name}: `hooks` must be an object")
    changed = False
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{name}: `hooks.{event}` must be a list")
        ours = [args for g in groups for h in _entries(g) if (args := _our_args(h, event))]
        command = hook_command(event, agent, db, _hook_program(ours[0][0] if ours else None), mcp)
        if [shlex.join(args) for args in ours] == [command]:
            continue
        hooks[event] = _with_command(groups, event, command)
        changed = True
    return (_dump_json(data, text), True) if changed else (text, False)


def _with_command(groups: list[Any], event: str, command: str) -> list[Any]:
    """``groups`` with taskloom's hook for ``event`` running ``command``: the first one
    there rewritten in place (its other keys, such as a ``timeout`` the user set, and its
    group's kept), any other taskloom hook for it dropped, or a new group at the end."""
    kept, placed = [], False
    for group in groups:
        entries = _entries(group)
        if not any(_our_args(h, event) for h in entries):
            kept.append(group)
            continue
        rewritten = []
        for hook in entries:
            if not _our_args(hook, event):
                rewritten.append(hook)
            elif not placed:
                rewritten.append({**hook, "command": command})
                placed = True
        if rewritten:  # else the group held only a second taskloom hook
            kept.append({**group, "hooks": rewritten})
    if not placed:
        kept.append({"hooks": [{"type": "command", "command": command}]})
    return kept


def _hook_program(written: str | None) -> str:
    """The program a hook names: the one ``written`` there, unless it is a bare name while
    this program is not the one that name finds on PATH (:func:`program` gives its path)."""
    mine = program()
    if written is None or (PureWindowsPath(written).name == written and mine != "taskloom"):
        return mine
    return written


def _entries(group: object) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _our_args(hook: object, event: str) -> list[str]:
    """The argv of a hook taskloom wrote for ``event`` (``taskloom hook <name> …``, the
    program maybe given by its path, ``/opt/venv/bin/taskloom`` or ``…\\taskloom.exe``), or
    ``[]`` for any other hook."""
    command = hook.get("command") if isinstance(hook, dict) else None
    try:
        args = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return []
    program = PureWindowsPath(args[0]).name if args else ""  # takes "/" and "\\" alike
    ours = program in PROGRAM_NAMES and args[1:3] == ["hook", HOOK_EVENTS[event]]
    return args if ours else []


def taskloom_entries(text: str, name: str) -> dict[str, str]:
    """Taskloom's own entries in a config file, each as the command line it runs (a URL's
    password masked), by what it is: ``MCP server``, ``UserPromptSubmit hook``…; none for a
    file that does not parse. ``init`` compares them before and after, to say which setup it
    replaced."""
    try:
        data = tomllib.loads(text) if name.endswith(".toml") else json.loads(text or "{}")
    except ValueError:  # TOMLDecodeError is one
        return {}
    if not isinstance(data, dict):
        return {}
    found: dict[str, list[str]] = {}
    servers = data.get("mcp_servers" if name.endswith(".toml") else "mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("args"), list):
        found["MCP server"] = [str(entry.get("command")), *map(str, entry["args"])]
    hooks = data.get("hooks")
    for event in HOOK_EVENTS if isinstance(hooks, dict) else ():
        groups = _list(hooks.get(event)) if isinstance(hooks, dict) else []
        for args in (_our_args(h, event) for g in groups for h in _entries(g)):
            if args:
                found[f"{event} hook"] = args
    return {
        what: shlex.join(redact(a) if "://" in a else a for a in args)
        for what, args in found.items()
    }


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def merge_codex_toml(text: str, name: str, argv: list[str]) -> tuple[str, bool]:
    """Add ``[mcp_servers.taskloom]`` to Codex's config.toml, or point the one there at
    ``argv``: run again with another ``--db`` or agent, the MCP server must follow the hooks
    (which are replaced) rather than keep using the old database. Only its ``command`` and
    ``args`` keys are rewritten, in place and in the file's line endings, so keys a user
    added (``env``…) stay. The result must parse to the file as it was plus taskloom's entry
    (a table appended after an inline ``mcp_servers = {…}`` would not parse, and Codex would
    not start): if it does not, nothing is written and the error gives the lines to write by
    hand."""
    data = _load_toml(text, name)
    servers = data.get("mcp_servers", {})
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    ours = _server_keys(argv)
    if _is_set(entry, ours):
        return text, False
    lines = {key: f"{key} = {_toml_value(value)}" for key, value in ours.items()}
    eol = "\r\n" if "\r\n" in text else "\n"
    if isinstance(servers, dict) and (entry is None or isinstance(entry, dict)):
        want = {**data, "mcp_servers": {**servers, SERVER_NAME: {**(entry or {}), **ours}}}
        if entry is None:
            updated: str | None = _append_table(text, lines, eol)
        else:
            updated = _rewrite_table(text, lines, eol)
        if updated is not None and _parses_to(updated, want):
            return updated, True
    raise _by_hand(name, entry, lines)


def codex_hooks_off(text: str) -> str | None:
    """The ``[features]`` key by which Codex's config.toml turns hooks off (``hooks``, or its
    older name ``codex_hooks``), if one does: the queue hooks would then never run."""
    try:
        features = tomllib.loads(text).get("features")
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(features, dict):
        return None
    return next((key for key in ("hooks", "codex_hooks") if features.get(key) is False), None)


def _by_hand(name: str, entry: object, lines: dict[str, str]) -> InvalidInput:
    """The refusal when taskloom cannot edit config.toml safely, with what to write instead."""
    if entry is None:
        return InvalidInput(
            f"{name} has `mcp_servers` in a shape taskloom does not add a table to (an inline"
            " table?): add this entry inside its braces by hand\n  "
            f"{SERVER_NAME} = {{ {', '.join(lines.values())} }}"
            "\nor write it as [mcp_servers.<name>] tables and run this again"
        )
    return InvalidInput(
        f"{name} already has [mcp_servers.{SERVER_NAME}] for another setup, in a shape taskloom"
        " does not rewrite: set its lines to\n  "
        + "\n  ".join(lines.values())
        + "\nor remove the table and run this again"
    )


_TABLE = re.compile(
    rf"\s*\[\s*mcp_servers\s*\.\s*(?:{SERVER_NAME}|\"{SERVER_NAME}\"|'{SERVER_NAME}')\s*\]\s*(#.*)?"
)
_KEY = re.compile(r"\s*(command|args)\s*=")


def _append_table(text: str, lines: dict[str, str], eol: str) -> str:
    """``text`` with taskloom's table added at the end, after a blank line."""
    separator = "" if not text or text.endswith(eol * 2) else eol if text.endswith(eol) else eol * 2
    rows = [f"[mcp_servers.{SERVER_NAME}]", *lines.values()]
    return text + separator + "".join(f"{row}{eol}" for row in rows)


def _rewrite_table(text: str, lines: dict[str, str], eol: str) -> str | None:
    """``text`` with the ``command`` and ``args`` keys of taskloom's table replaced where they
    are, every line of a value written over several (``args = [`` …), the comment after it
    kept; one missing is added after the other, or under the header; ``None`` if the table
    has no header of its own."""
    rows = text.splitlines(keepends=True)
    start = next((i for i, row in enumerate(rows) if _TABLE.fullmatch(row.rstrip("\r\n"))), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(rows)) if rows[i].lstrip().startswith("[")), len(rows)
    )
    body, placed, i, after = [], set(), start + 1, 0
    while i < end:
        found = _KEY.match(rows[i])
        if found is None:
            body.append(rows[i])
            i += 1
            continue
        last = _value_end(rows, i, end)
        if found.group(1) not in placed:
            body.append(f"{lines[found.group(1)]}{_comment(rows[i:last])}{eol}")
            placed.add(found.group(1))
            after = len(body)
        i = last
    head = rows[start] if rows[start].endswith("\n") else rows[start] + eol
    body[after:after] = [f"{line}{eol}" for key, line in lines.items() if key not in placed]
    return "".join([*rows[:start], head, *body, *rows[end:]])


def _value_end(rows: list[str], first: int, end: int) -> int:
    """The index past the last line of the key-value pair that starts at ``rows[first]``:
    the first run of lines that parses on its own (an array or string may span several)."""
    for last in range(first + 1, end + 1):
        try:
            tomllib.loads("".join(rows[first:last]))
        except tomllib.TOMLDecodeError:
            continue
        return last
    return first + 1  # no end found: the check of the result refuses it


def _comment(pair: list[str]) -> str:
    """The comment that ends the key-value pair on these lines (``  # mine``, with the space
    before it), ``""`` if none: the first ``#`` after which the pair parses without the rest
    (one inside a string does not)."""
    last = pair[-1].rstrip("\r\n")
    for at in (i for i, char in enumerate(last) if char == "#"):
        try:
            tomllib.loads("".join(pair[:-1]) + last[:at])
        except tomllib.TOMLDecodeError:
            continue
        return last[len(last[:at].rstrip()) :]
    return ""


def _parses_to(text: str, want: dict[str, Any]) -> bool:
    try:
        return tomllib.loads(text) == want
    except tomllib.TOMLDecodeError:
        return False


def _toml_value(value: str | list[str]) -> str:
    """A TOML string or array of strings (JSON's escapes are valid TOML basic strings)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # TOML refuses JSON's surrogate escapes
    return f"[{', '.join(_toml_value(item) for item in value)}]"


def _load_toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{name} is not valid TOML ({exc}); fix or move it first") from None
