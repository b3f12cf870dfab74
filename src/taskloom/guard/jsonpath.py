"""JSONPath (RFC 9535) over a stashed result, with errors that show where and how to fix.

Evaluation is the standard's, through ``python-jsonpath`` in strict mode: bracket notation
for any key (``$['639-3'][5]``), recursive descent with filters (``$..[?(@.type=='C')]``),
logical operators, slices and the standard functions (``length``, ``count``, ``match``,
``search``, ``value``). A match is reported with its path in the short form
:func:`~taskloom.domain.stash.child_path` writes (``$.items[3].user``), which reads back.

A path that does not parse is an error giving the position, what was expected there and,
when a usual slip explains it, the corrected path: a dotted key that is not an identifier
(``$.639-3[5]`` → ``$['639-3'][5]``), ``=`` for ``==`` in a filter, a missing ``$``, a
quoted dotted key (``$.'a b'``), an unclosed bracket.

Matches are produced one at a time and a match does not keep its siblings alive, so a
filter over a large lazily read document (:mod:`~taskloom.guard.jsondoc`) holds only the
matches the caller keeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from jsonpath import JSONPathEnvironment, JSONPathMatch
from jsonpath.exceptions import JSONPathError, JSONPathSyntaxError

from taskloom.domain.errors import InvalidInput
from taskloom.domain.stash import child_path
from taskloom.guard.search import echo

MAX_DEPTH = 130
"""Deeper than any JSON the guard keeps as JSON (:data:`~taskloom.guard.compact.MAX_DEPTH`)."""


class _Match(JSONPathMatch):
    """A match that keeps neither its parent nor its children: a filter over 100,000
    records kept every matched record alive through its parent's list of children."""

    def add_child(self, *children: JSONPathMatch) -> None:
        return None

    def new_child(self, obj: object, key: int | str) -> JSONPathMatch:
        return _Match(
            filter_context=self.filter_context(),
            obj=obj,
            parent=None,
            parts=(*self.parts, key),
            path="",
            root=self.root,
        )


class _Environment(JSONPathEnvironment):
    match_class = _Match
    max_recursion_depth = MAX_DEPTH


_ENV = _Environment(strict=True)
_SHORTHAND = re.compile(r"[A-Za-z_\x80-\U0010ffff][\w\x80-\U0010ffff]*")
_DOTTED = re.compile(r"(\.\.?)(?!\*)([^.\[\]()\s=!<>&|,'\"]+|'[^']*'|\"[^\"]*\")")
"""A dotted member name as people write it: anything up to the next ``.``, ``[`` or
operator, or a quoted name after the dot."""


def path_of(parts: tuple[int | str, ...]) -> str:
    """The short path of a match's parts: ``$.items[3]['it\\'s']``."""
    path = "$"
    for part in parts:
        path = child_path(path, part)
    return path


@lru_cache(maxsize=256)
def compile_path(expr: str) -> Any:
    """``expr`` compiled, or :class:`InvalidInput` saying where it fails and, when a usual
    slip explains it, the corrected path."""
    expr = expr.strip()
    try:
        return _ENV.compile(expr)
    except JSONPathSyntaxError as exc:
        raise InvalidInput(_syntax_message(expr, exc)) from None
    except JSONPathError as exc:
        raise InvalidInput(f"JSONPath {echo(expr, 100)!r}: {exc.args[0]}") from None


def find(root: Any, expr: str) -> Iterator[tuple[tuple[int | str, ...], Any]]:
    """Every ``(path parts, value)`` that ``expr`` selects in ``root``, in document order
    (:func:`path_of` writes the parts as a path)."""
    compiled = compile_path(expr)
    matches: Any = [_Match(filter_context={}, obj=root, parent=None, path="", parts=(), root=root)]
    try:
        if hasattr(compiled, "segments"):  # as JSONPath.finditer, from a match of ours
            for segment in compiled.segments:
                matches = segment.resolve(matches)
        else:
            matches = compiled.finditer(root)
        for match in matches:
            yield tuple(match.parts), match.obj
    except JSONPathError as exc:
        raise InvalidInput(f"JSONPath {echo(expr, 100)!r}: {exc.args[0]}") from None


def _syntax_message(expr: str, exc: JSONPathSyntaxError) -> str:
    token = exc.token
    index = len(expr) if token is None or token.index < 0 else token.index
    what = echo(str(exc.args[0]), 100) if exc.args else "syntax error"
    message = (
        f"cannot parse JSONPath {echo(expr, 100)!r} at position {index}"
        f" ({echo(expr[index:], 40)!r}): {what}"
    )
    fixed = corrected(expr)
    if fixed is not None and fixed != expr:
        quoted = " (a string value is quoted)" if fixed.count("'") > expr.count("'") else ""
        return message + f". Did you mean {echo(fixed, 120)}{quoted}"
    return message + (
        ". Examples: $.items[3].name, $['key-with-dashes'], $..[?(@.state=='open')].number"
    )


def corrected(expr: str) -> str | None:
    """``expr`` with the usual slips fixed, if the result parses; else ``None``."""
    fixed = expr.strip()
    if not fixed.startswith("$"):
        fixed = "$" + ("" if fixed.startswith("[") else ".") + fixed
    fixed = _DOTTED.sub(_bracket, fixed)
    fixed = re.sub(r"(?<![=!<>])=(?!=)", "==", fixed)
    fixed = _BARE.sub(_quote, fixed)
    fixed = re.sub(r"\s+(and|AND)\s+", " && ", fixed)
    fixed = re.sub(r"\s+(or|OR)\s+", " || ", fixed)
    fixed += "]" * max(0, fixed.count("[") - fixed.count("]"))
    try:
        _ENV.compile(fixed)
    except JSONPathError:
        return None
    return fixed


_BARE = re.compile(r"(==|!=|<=|>=|<|>)\s*([A-Za-z_][\w.-]*)(?=\s*(?:\)|\]|&&|\|\|))")
"""A bare word compared in a filter (``@.state==open``): a string that lost its quotes."""


def _quote(match: re.Match[str]) -> str:
    op, word = match.groups()
    return match.group(0) if word in ("true", "false", "null") else f"{op}'{word}'"


def _bracket(match: re.Match[str]) -> str:
    """A dotted name that is not an identifier, in brackets: ``.639-3`` → ``['639-3']``."""
    dots, name = match.groups()
    if name[0] in "'\"":
        name = name[1:-1]
    elif _SHORTHAND.fullmatch(name):
        return dots + name
    escaped = name.replace("\\", "\\\\").replace("'", "\\'")
    return ("..[" if dots == ".." else "[") + f"'{escaped}']"
