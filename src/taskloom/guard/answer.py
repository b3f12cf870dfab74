"""How a retrieval answer is written: a header naming the method, then what fits the cap.

Every answer, local or from the LLM, fits ``extract_cap_tokens`` with its header. An exact
answer (a JSONPath, a count, a list) says how many matched in all and how to read every
match; a ranking says when its match is weak.
"""

from __future__ import annotations

import json

from taskloom.domain.text import counted, plural
from taskloom.guard.config import GuardConfig
from taskloom.guard.extract import Extraction
from taskloom.guard.search import echo
from taskloom.guard.slices import HEADER_TOKENS, cap_text
from taskloom.guard.summarize import MapReduceResult
from taskloom.guard.tokens import Counter, counter

NO_MATCH = {
    "jsonpath": "The JSONPath matches nothing in this result; check the keys with"
    " read_result(path=...) or ask a plain question.",
    "regex": "The regex matches no line of this result; try another pattern or a plain question.",
    "ranking": "Nothing matched; try other words, a JSONPath or /regex/.",
    "exact": "No record matches.",
}
NO_WORDS = (
    "the query has no word to search for (only punctuation, or words such as 'the' or"
    " 'list'), so it can match nothing: name the ids, fields or values you need, or ask with"
    " a JSONPath ($..login) or a /regex/"
)
"""An error, not a miss: no result could answer such a query, so the call must change."""


def listed_values(piece: str) -> int:
    """How many whole values the JSON array of a fragment (``--- where`` then the array,
    perhaps cut to fit) shows: a value counts when a ``,`` or the closing ``]`` follows it,
    so a number cut short is not counted."""
    body = piece.partition("\n")[2]
    if not body.startswith("["):
        return 0
    decoder = json.JSONDecoder()
    at, count = 1, 0
    while at < len(body):
        try:
            _value, at = decoder.raw_decode(body, at)
        except ValueError:
            break
        if body[at : at + 1] not in (",", "]"):
            break
        count += 1
        if body[at] == "]":
            break
        at += 1
    return count


class Answers:
    """Writes the answers of one guard's ``extract`` under its caps."""

    def __init__(self, config: GuardConfig) -> None:
        self.config = config

    @property
    def count(self) -> Counter:
        return counter(self.config.encoding)

    def llm(self, rid: str, query: str, result: MapReduceResult, local: Extraction) -> str:
        """The map-reduce answer under ``extract_cap_tokens``, like a local one: a provider
        that ignored ``max_tokens`` returned a 200,000-character answer whole. When no chunk
        answered (all failed, or found nothing) the local ranking's fragments follow,
        labelled as the weaker match they are, rather than being thrown away."""
        head = (
            f'[extract from {rid} · query "{echo(query)}" · method: LLM map-reduce · '
            f"{counted(result.chunks, 'chunk')}, {counted(result.calls, 'call')}, "
            f"{len(result.failed)} failed]"
        )
        answer = result.answer or "(no chunk that answered had matching content)"
        cap = self.config.extract_cap_tokens
        failed = [
            f"FAILED chunk {chunk.index} (lines {chunk.first_line}-{chunk.last_line}): "
            f"{error} — read it with read_result(lines=...)"
            for chunk, error in result.failed
        ]
        weak = self._weak_local(local) if not result.partials else ""
        room = cap - self.count("\n".join([head, *failed, weak])) - HEADER_TOKENS // 2
        shown = cap_text(answer, max(room, 1), self.count)
        out = [head, shown]
        if shown != answer:
            out.append(
                f"…(answer cut at {cap:,} of its {self.count(answer):,} tokens: ask a narrower"
                " query, or read the chunks' lines with read_result(lines=...))"
            )
        return self._capped("\n".join([*out, weak, *failed] if weak else out + failed))

    def _weak_local(self, local: Extraction) -> str:
        """The local ranking's fragments, as the weaker match, within half the answer cap."""
        pieces = self._fit_fragments(local, self.config.extract_cap_tokens // 2)
        if not pieces:
            return ""
        return (
            f"Local ranking (weak match: few of the query's words found; {len(pieces)} of"
            f" {counted(local.total_matches, 'record')}):\n" + "\n".join(pieces)
        )

    def _capped(self, text: str) -> str:
        """``text`` within ``extract_cap_tokens``, header included: the last guarantee when
        the parts around an answer (failed chunks, a long header) crowd it."""
        cap = self.config.extract_cap_tokens
        return text if self.count(text) <= cap else cap_text(text, cap - 8, self.count) + " …(cut)"

    def local(self, rid: str, query: str, found: Extraction, *, too_big: int | None = None) -> str:
        method = {
            "jsonpath": "JSONPath",
            "regex": "regex",
            "ranking": "local ranking",
            "exact": "exact (JSONPath over every record)",
            "table": "exact (every row of the table)",
            "section": "Markdown section",
            "lines": "exact (every line)",
            "tally": "exact tally (every record read)",
            "trace": "traceback (every line read)",
        }
        head = f'[extract from {rid} · query "{echo(query)}" · method: {method[found.method]} · '
        why = "" if too_big is None else "\n" + self._too_big(too_big)
        summary = "\n" + found.summary if found.summary else ""
        more = found.more.replace("result_id=…", f'result_id="{rid}"')
        budget = self.config.extract_cap_tokens - self.count(head + why + summary + more)
        out = self._fit_fragments(found, budget - HEADER_TOKENS)
        shown = len(out)
        if found.lead and out:  # a list of the matches' values or names is no match itself
            shown = listed_values(out[0]) if found.lead == "values" else shown - 1
        if not out:
            if found.method == "tally":
                unit = plural(found.total_matches, found.unit)
                return self._capped(f"{head}{found.total_matches:,} {unit}]{summary}")
            if found.summary:
                return self._capped(head + "no match shown]" + why + summary)
            return self._capped(head + "no match]" + why + "\n" + NO_MATCH[found.method])
        total = f"{found.total_matches:,}{'+' if found.at_least else ''}"
        head += f"{shown} of {total} {plural(found.total_matches, found.unit)} shown]" + summary
        if found.method == "ranking" and not found.useful() and not found.summary:
            head += (
                why
                or "\n(weak match: few query words found; no LLM configured for a deeper search)"
            )
        if more and (shown < len(found.fragments) or found.total_matches > shown):
            head += f"\n({more})"
        elif shown < found.total_matches and found.method != "ranking":
            left = f"{'at least ' if found.at_least else ''}{found.total_matches - shown:,}"
            head += f"\n({left} more: narrow the query or use read_result)"
        return self._capped(head + "\n" + "\n".join(out))

    def _fit_fragments(self, found: Extraction, budget: int) -> list[str]:
        """The labelled fragments that fit in ``budget`` tokens; the first is cut to fit."""
        used, out = 0, list[str]()
        for where, body in found.fragments:
            piece = f"--- {where}\n{body}"
            cost = self.count(piece)
            if out and used + cost > budget:
                break
            if cost > budget:
                piece = (
                    cap_text(piece, max(budget - 10, 1), self.count) + " …(cut; use read_result)"
                )
                cost = self.count(piece)
            out.append(piece)
            used += cost
        return out

    def _too_big(self, chunks: int) -> str:
        return (
            f"(no LLM map-reduce: this result is {chunks:,} chunks of up to "
            f"{self.config.chunk_tokens:,} tokens, over max_chunks={self.config.max_chunks}; "
            "ask with a JSONPath or a /regex/, or read it with read_result)"
        )
