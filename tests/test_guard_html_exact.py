"""Only an HTML document is cleaned, and what cleaning removes is never lost: source that
merely holds a ``<body>`` passes exactly, and a cleaned document's original is stored."""

from __future__ import annotations

import pytest

from taskloom.client import Taskloom
from taskloom.guard.clean import Cleaned, clean, is_html

PHP = """<?php $name = 'Hi'; ?>
<html>
<body>
  <?php if ($show): ?>
    <p><?= $name ?></p>
  <?php endif; ?>
</body>
</html>
"""
PYTHON = '''from flask import Flask
app = Flask(__name__)

PAGE = """<html>
<body>
  <h1>Hello</h1>
  <script>var x = 1 < 2;</script>
</body>
</html>"""

def handler(a, b):
    if a < b and b > 0:
        return PAGE
    return "<p>no</p>"
'''
JS = """const page = `
<html>
  <body>
    <h1>${title}</h1>
  </body>
</html>`;
export default page;
"""
JINJA = """<!doctype html>
<html><body>
  {% for x in xs %}<p>{{ x }}</p>{% endfor %}
</body></html>
"""
ERB = "<html>\n<body>\n  <%= @user.name %>\n</body>\n</html>\n"


@pytest.mark.parametrize(
    "source", [PHP, PYTHON, JS, JINJA, ERB], ids=["php", "py", "js", "jinja", "erb"]
)
def test_source_holding_a_body_element_is_not_html(tl: Taskloom, source: str) -> None:
    """Holding ``<body>…</body>`` made a file HTML: the PHP template came back as "Hi",
    the Python file without its indentation, and nothing was stored to read it back."""
    assert not is_html(source)
    assert clean(source) == Cleaned(source, ())
    out = tl.guard("t1").stash("read_file", source)
    assert out.mode == "pass" and out.text == source


@pytest.mark.parametrize(
    "page",
    [
        "<!DOCTYPE html><html><body><p>x</p></body></html>",
        "\ufeff  <!-- saved from url -->\n<html lang=en><body>x</body></html>",
        "<html>\n<head><title>t</title></head></html>",
    ],
)
def test_a_document_that_starts_as_html_is_html(page: str) -> None:
    assert is_html(page)


def test_a_page_cleaned_to_fit_is_shown_cleaned_and_its_original_stored(tl: Taskloom) -> None:
    """A cleaned page was handed on with no way back to what cleaning removed."""
    script = "".join(f"var row{i} = render({i});\n" for i in range(400))
    page = (
        f"<!doctype html><html><head><script>\n{script}</script></head>"
        "<body><h1>Orders</h1><table><tr><td>4412</td><td>shipped</td></tr></table></body></html>"
    )
    g = tl.guard("t1")
    out = g.stash("web", page)
    assert out.mode == "cleaned" and out.result_id
    head, shown = out.text.split("\n", 1)
    assert head.startswith(f'[cleaned tool output: result_id="{out.result_id}" · tool web')
    assert "markup removed: 1 script blocks" in head
    assert f'read_result(result_id="{out.result_id}", page=1)' in head
    assert shown == "Orders\n\n4412 shipped"
    read = g.read(out.result_id, lines="2-3")
    assert read.endswith("var row0 = render(0);\nvar row1 = render(1);")
    again = g.stash("web", page)
    assert (again.text, again.mode, again.result_id) == (out.text, "cleaned", out.result_id)


def test_a_small_page_cleaning_would_barely_shrink_passes_exactly(tl: Taskloom) -> None:
    page = "<!doctype html><html><body><p>Hello <b>world</b></p></body></html>"
    g = tl.guard("t1")
    assert g.stash("web", page).text == page
    assert g.results() == []
