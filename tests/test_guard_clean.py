"""Markup cleaning and JSON compaction: what goes, what stays, and that it is reported."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from taskloom.guard.clean import Cleaned, clean
from taskloom.guard.compact import compact

PAGE = """<html><head><style>body { color: red }</style><script>var x = "<b>";</script></head>
<body><!-- nav --><svg width="10"><path d="M0 0"/></svg>
<p>Order <b>#4412</b> shipped &amp; paid</p>   <img src="data:image/png;base64,iVBORw0KGgo=">



<p>Total:    42.50</p></body></html>"""


def test_clean_strips_markup_and_reports_it() -> None:
    out = clean(PAGE)
    assert "Order #4412 shipped & paid" in out.text
    assert "Total: 42.50" in out.text
    assert "[svg]" in out.text
    for gone in ("color: red", "var x", "nav", "base64", "<p>", "\n\n\n"):
        assert gone not in out.text
    assert {r.split(" ", 1)[1] for r in out.removed} >= {
        "script blocks",
        "style blocks",
        "svg images",
        "comments",
        "tags",
    }


def test_plain_text_is_kept_exactly_but_for_nul() -> None:
    """Collapsed spaces and blank lines in a file an agent read made its edits miss."""
    text = "a  <  b and c > d\t\tend\n\n\n\nnext\n"
    assert clean(text) == Cleaned(text, ())
    assert clean("a\x00b") == Cleaned("ab", ("1 NUL characters",))


REPO = {
    "id": 1296269,
    "name": "Hello-World",
    "url": "https://api.github.com/repos/octocat/Hello-World",
    "html_url": "https://github.com/octocat/Hello-World",
    "issues_url": "https://api.github.com/repos/octocat/Hello-World/issues{/number}",
    "forks_url": "https://api.github.com/repos/octocat/Hello-World/forks",
    "avatar_url": "https://avatars.githubusercontent.com/u/1?v=4",
    "homepage": None,
    "stargazers_count": 80,
}


def test_compact_keeps_identifiers_and_counts_and_reports_drops() -> None:
    payload = [{"number": n, "state": "open", "repository": REPO} for n in (1, 2, 3)]
    out = compact(payload)
    first = out.value[0]["repository"]
    assert first["id"] == 1296269 and first["stargazers_count"] == 80
    assert first["html_url"] and first["avatar_url"]  # other host / kept key
    assert "issues_url" not in first and "forks_url" not in first and "homepage" not in first
    assert out.value[1]["repository"] == {"$same_as": "$[0].repository"}
    assert [item["number"] for item in out.value] == [1, 2, 3]
    assert out.dropped == {"derivable *_url fields": 6, "nulls": 3, "repeated sub-objects": 2}
    assert out.report() == ("dropped: 6 derivable *_url fields, 3 nulls, 2 repeated sub-objects")
    assert payload[0]["repository"]["homepage"] is None  # input untouched


def test_compact_of_clean_json_drops_nothing() -> None:
    value = {"a": [1, 2, 3], "b": {"c": "d"}}
    out = compact(value)
    assert out.value == value and out.report() == "nothing dropped"
    assert json.loads(out.text) == value


def test_code_and_text_with_angle_brackets_keep_every_character() -> None:
    """Anything tag-like was stripped: C++ lost ``<vector>``, ``<int>`` and ``<b && c>``."""
    for text in [
        "#include <vector>\nstd::vector<int> v;\nif (a<b && c>d) return 1;",
        "List<String> xs = new ArrayList<>(); Map<K, V> m; if (n <b> 0) {}",
        "<user><name>bob</name><role>admin</role></user>",  # XML: tag names are data
        "Wrap a word in <b>bold</b> to stress it; this README explains HTML to new readers.",
        "def f():\n    if x:\n        return 1",  # indentation is content
    ]:
        assert clean(text) == Cleaned(text, ()), text


def test_html_tags_that_end_a_block_or_a_cell_leave_a_separator() -> None:
    def page(body: str) -> str:
        return f"<!doctype html><html><body>{body}</body></html>"

    assert clean(page("<td>1</td><td>2</td>")).text == "1 2"
    table = "<table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>"
    assert clean(page(table)).text == "1 2\n\n3 4"
    assert clean(page("<div>first<br>second</div><p>third</p>")).text == "first\nsecond\n\nthird"
    page = "<!DOCTYPE html><html><body><p>Vec&lt;T&gt; and <i>List&lt;int&gt;</i></p></body></html>"
    assert clean(page).text == "Vec<T> and List<int>"


def test_pass_through_keeps_code_exactly(tl: Taskloom) -> None:
    code = "#include <vector>\nstd::vector<int> v;\nif (a<b && c>d) return 1;\n"
    assert tl.guard("t1").wrap("cat", code) == code
    page = "<!-- saved -->\n<html><body><td>1</td><td>2</td></body></html>"
    assert tl.guard("t1").wrap("web", page) == page  # cleaning would save less than it costs
