"""An exact count of a log's lines that hold the words a question names.

"How many ERROR lines are in the log?", "How many WARNING lines from app.mailer?": a
count question whose words, past stop words, the names of lines themselves (``lines``,
``entries``, ``events``, ``log``…) and a name of the result as a count's conditions read
it (:func:`~taskloom.guard.loose.names_source`: "in the journal", "this build") and a
verb of writing a line (:data:`LINE_VERBS`: "logged", "reported") when the text does not
hold that word, all appear in the text as whole words (not inside a
longer word, a dotted name or a hyphenated one), written as the question writes them, at
least one of them a level: an upper-case word of three or more letters (``ERROR``), or a
severity name in any case (``error``, ``crit``, ``warn``), bare or bracketed (``[error]``).
A severity name written in the plural (``errors``, ``warnings``) is held in either number,
as a compiler writes ``error[E0308]`` and ``3 warnings``. The count is of the lines that
hold every such word, and the answer says so, with the regex that lists them.
"""

from __future__ import annotations

import re

from taskloom.domain.lines import split_lines
from taskloom.guard.exact import intent
from taskloom.guard.levels import SEVERITIES, is_level
from taskloom.guard.loose import names_source
from taskloom.guard.question import tokenize
from taskloom.guard.rank import STOPWORDS

LINE_NOUNS = frozenset(
    (
        "line", "lines", "entry", "entries", "event", "events", "message", "messages",
        "record", "records", "row", "rows", "log", "logs", "output", "file", "there",
        "many", "much", "count", "number", "total",
    )
)  # fmt: skip

LINE_VERBS = frozenset(
    ("was", "were", "been", "got", "logged", "reported", "printed", "emitted", "written",
     "recorded", "raised", "seen", "shown", "mentioned", "mention", "mentions", "mentioning",
     "contain", "contains")
)  # fmt: skip
"""Words that say a line was written or holds something, and their auxiliaries ("how many
I/O errors were logged for sdc?"), no word of the lines unless the text holds them."""


def word_regex(words: list[str]) -> str:
    """The regex of a line holding every word of ``words`` whole (a severity's plural in
    either number)."""
    return "".join(rf"(?=.*(?<![\w.-]){_form(w)}(?![\w-]|\.\w))" for w in words)


def _form(word: str) -> str:
    """The regex of ``word``: a severity's plural (``errors``) as ``errors?``."""
    if _plural_level(word):
        return re.escape(word[:-1]) + "s?"
    return re.escape(word)


def _plural_level(word: str) -> bool:
    return word.endswith("s") and word[:-1].lower() in SEVERITIES


def _held(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` whole."""
    return re.search(rf"(?<![\w.-]){_form(word)}(?![\w-]|\.\w)", text) is not None


def _said(word: str) -> str:
    return f"{word[:-1]!r} or {word!r}" if _plural_level(word) else repr(word)


def counted_lines(text: str, question: str) -> tuple[int, list[str], str, list[int]] | None:
    """The count, the words, the regex and the first matching lines (1-based, up to 3), or
    ``None`` when the question is no such count."""
    if intent(question) != "count":
        return None
    words: list[str] = []
    tokens = tokenize(question)
    for i, tok in enumerate(tokens):
        low = tok.text.lower()
        if tok.op or (not tok.quoted and (low in STOPWORDS or low in LINE_NOUNS)):
            continue
        if not tok.quoted and names_source(tokens, i) and not _held(text, tok.text):
            continue
        if not tok.quoted and low in LINE_VERBS and not _held(text, tok.text):
            continue
        if tok.text not in words:
            words.append(tok.text)
    if not words or not any(is_level(w) or _plural_level(w) for w in words):
        return None
    source = word_regex(words)
    pattern = re.compile(source)
    every_line = split_lines(text)
    lines = [i for i, line in enumerate(every_line, 1) if pattern.match(line)]
    if not lines:
        every = [re.compile(word_regex([w])) for w in words]
        if not all(any(p.match(line) for line in every_line) for p in every):
            return None
    return len(lines), [_said(w) for w in words], source, lines[:3]
