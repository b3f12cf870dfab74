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
from typing import Any

from taskloom.domain.common import parse_json_object, url_has_password
from taskloom.domain.errors import InvalidInput

SERVER_NAME = "taskloom"
HOOK_EVENTS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}


def mcp_command(thread: str, agent: str, db: str | None) -> list[str]:
    """The argv of the stdio MCP server for this thread and agent. A ``db`` with a password
    is refused: these files are often committed, and a hook's command line is on show in
    ``ps`` every time it runs."""
    if db and url_has_password(db):
        raise InvalidInput(
            "--db holds a password, which would be written in clear into the agent's files"
            " and command lines: set TASKLOOM_URL in the agent's environment instead, and"
            " leave --db out"
        )
    args = ["taskloom", "mcp", "--thread", thread, "--agent", agent]
    return args + (["--db", db] if db else [])


def hook_command(event: str, agent: str, db: str | None) -> str:
    args = ["taskloom", "hook", HOOK_EVENTS[event], "--agent", agent]
    return shlex.join(args + (["--db", db] if db else []))


def _load_json(text: str, name: str) -> dict[str, Any]:
    return parse_json_object(text, name) if text.strip() else {}


def _dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def merge_mcp_json(text: str, name: str, argv: list[str]) -> tuple[str, bool]:
    """Add or update the ``taskloom`` entry of an ``mcpServers`` JSON file."""
    data = _load_json(text, name)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{name}: `mcpServers` must be an object")
    entry = {"command": argv[0], "args": argv[1:]}
    if servers.get(SERVER_NAME) == entry:
        return text, False
    servers[SERVER_NAME] = entry
    return _dump_json(data), True


def merge_hooks_json(text: str, name: str, agent: str, db: str | None) -> tuple[str, bool]:
    """Put taskloom's prompt and session-start hooks in a hooks settings file (the shape
    Claude Code's settings.json and Codex's hooks.json share), once each: a taskloom hook
    already there for another agent or database is replaced, not joined by a second one."""
    data = _load_json(text, name)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{name}: `hooks` must be an object")
    changed = False
    for event in HOOK_EVENTS:
        command = hook_command(event, agent, db)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{name}: `hooks.{event}` must be a list")
        ours = [h["command"] for g in groups for h in _entries(g) if _is_ours(h, event)]
        if ours == [command]:
            continue
        kept = []
        for group in groups:
            entries = _entries(group)
            others = [h for h in entries if not _is_ours(h, event)]
            if len(others) < len(entries):
                if not others:
                    continue  # the group held only taskloom's hook
                group = {**group, "hooks": others}
            kept.append(group)
        hooks[event] = [*kept, {"hooks": [{"type": "command", "command": command}]}]
        changed = True
    return (_dump_json(data), True) if changed else (text, False)


def _entries(group: object) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _is_ours(hook: object, event: str) -> bool:
    """A hook taskloom wrote for ``event``: ``taskloom hook <name> …``."""
    command = hook.get("command") if isinstance(hook, dict) else None
    try:
        args = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return args[:3] == ["taskloom", "hook", HOOK_EVENTS[event]]


def merge_codex_toml(text: str, name: str, argv: list[str]) -> tuple[str, bool]:
    """Add ``[mcp_servers.taskloom]`` to Codex's config.toml, or point the one there at
    ``argv``: run again with another ``--db`` or agent, the MCP server must follow the hooks
    (which are replaced) rather than keep using the old database. Only its ``command`` and
    ``args`` lines are rewritten, so keys a user added (``env``…) stay; an entry written in
    another shape is refused with what to change, before any file is written."""
    data = _load_toml(text, name)
    entry = (data.get("mcp_servers") or {}).get(SERVER_NAME)
    ours: dict[str, str | list[str]] = {"command": argv[0], "args": argv[1:]}
    lines = {key: f"{key} = {_toml_value(value)}" for key, value in ours.items()}
    if isinstance(entry, dict) and {k: entry.get(k) for k in ours} == ours:
        return text, False
    if entry is None:
        block = f"[mcp_servers.{SERVER_NAME}]\n" + "".join(f"{line}\n" for line in lines.values())
        separator = (
            "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        )
        return text + separator + block, True
    updated = _rewrite_table(text, lines)
    if updated is not None:
        after = _load_toml(updated, name)
        table = after["mcp_servers"][SERVER_NAME]
        rest = {**after, "mcp_servers": {**after["mcp_servers"], SERVER_NAME: entry}}
        if {k: table.get(k) for k in ours} == ours and rest == data:
            return updated, True
    raise InvalidInput(
        f"{name} already has [mcp_servers.{SERVER_NAME}] for another setup, in a shape taskloom"
        " does not rewrite: set its lines to\n  "
        + "\n  ".join(lines.values())
        + "\nor remove the table and run this again"
    )


_TABLE = re.compile(
    rf"\s*\[\s*mcp_servers\s*\.\s*(?:{SERVER_NAME}|\"{SERVER_NAME}\")\s*\]\s*(#.*)?"
)
_KEY = re.compile(r"\s*(command|args)\s*=")


def _rewrite_table(text: str, lines: dict[str, str]) -> str | None:
    """``text`` with the ``command`` and ``args`` lines of taskloom's table replaced (added if
    missing), or ``None`` if the table has no header of its own."""
    rows = text.splitlines(keepends=True)
    start = next((i for i, row in enumerate(rows) if _TABLE.fullmatch(row.rstrip("\r\n"))), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(rows)) if rows[i].lstrip().startswith("[")), len(rows)
    )
    body = [row for row in rows[start + 1 : end] if not _KEY.match(row)]
    head = rows[start] if rows[start].endswith("\n") else rows[start] + "\n"
    fresh = [f"{line}\n" for line in lines.values()]
    return "".join([*rows[:start], head, *fresh, *body, *rows[end:]])


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
