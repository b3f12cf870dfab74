"""The panel's script as plain ES modules (no build step): app.js and the modules it imports,
each served as JavaScript under the page's content security policy, each one concept of a
few hundred lines, none left unreached."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx

from taskloom.server.routes import STATIC
from taskloom.server.security import CONTENT_POLICY
from tests.test_architecture import cycles

IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w-]+\.js)";$', re.M)
MAX_LINES = 350


def served_modules(get: Callable[[str], httpx.Response]) -> dict[str, str]:
    """Every module app.js reaches through its imports, by name, as served by ``get``: each
    is answered 200 as ``text/javascript`` (a module served otherwise is not run)."""
    texts: dict[str, str] = {}
    todo = ["app.js"]
    while todo:
        name = todo.pop()
        if name in texts:
            continue
        response = get(f"/static/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith("text/javascript"), name
        texts[name] = response.text
        todo += IMPORT.findall(response.text)
    return texts


def _sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in Path(STATIC).glob("*.js")}


def test_every_module_is_reached_from_app_js_and_imports_only_siblings() -> None:
    """theme.js is the one classic script (it runs first, so the page never flashes the other
    theme); every other file is reached from app.js, and imports only by ``./name.js``."""
    sources = _sources()
    reached: set[str] = set()
    todo = ["app.js"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += IMPORT.findall(sources[name])
    assert reached == set(sources) - {"theme.js"}
    for name, text in sources.items():
        imports = [line for line in text.splitlines() if line.startswith("import ")]
        assert all(IMPORT.fullmatch(line) for line in imports), name


def test_no_module_imports_one_that_imports_it() -> None:
    """The modules' imports go one way, as the Python modules' do: a module that needs to
    call up (the stream asking the threads list to reload) is handed the function by
    app.js."""
    graph = {name: set(IMPORT.findall(text)) for name, text in _sources().items()}
    assert cycles({"a.js": {"b.js"}, "b.js": {"a.js"}}) == [["a.js", "b.js", "a.js"]]
    assert cycles(graph) == []


def test_each_module_is_small() -> None:
    sizes = {name: len(text.splitlines()) for name, text in _sources().items()}
    assert len(sizes) >= 10
    assert max(sizes.values()) <= MAX_LINES, sizes


def test_the_content_policy_lets_the_modules_run_and_nothing_else() -> None:
    """Modules load from the server's own origin ('self'); the policy allows no inline
    script and no other origin, which imports of the panel never need."""
    policy = CONTENT_POLICY.decode()
    assert "script-src 'self';" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    for text in _sources().values():
        assert "import(" not in text  # every import is static, from a sibling file
