"""examples/goal_agent.py runs to a complete goal against a local OpenAI-protocol server.

The hosted model is the one part that cannot run here, so it is faked at the protocol
boundary: a loopback HTTP server answering ``POST /v1/chat/completions`` with scripted
assistant messages (tool calls first, then a plain answer), in OpenAI's response shape.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

import taskloom
from tests.conftest import subprocess_env

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "goal_agent.py"


def call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def scripted_reply(request: dict[str, Any]) -> dict[str, Any]:
    """Plan, then finish and complete the goal, then answer in text."""
    tool_names = {t["function"]["name"] for t in request["tools"]}
    assert {"todo", "goal_complete"} <= tool_names and "todo_write" not in tool_names
    rounds = sum(1 for m in request["messages"] if m["role"] == "assistant")
    steps = ["Draft the notes", "Publish the notes"]
    if rounds == 0:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(1, "todo", {"op": "add", "content": s}) for s in steps],
        }
    elif rounds == 1:
        assert all(m["role"] == "tool" for m in request["messages"][-2:])
        cards = [{"content": s, "status": "done"} for s in steps]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(3, "todo", {"op": "replace", "cards": cards}),
                call(4, "goal_complete", {"evidence": "both steps done"}),
            ],
        }
    else:
        message = {"role": "assistant", "content": "The release notes are out."}
    return {
        "id": f"chatcmpl-{rounds}",
        "object": "chat.completion",
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def idle_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A model that only talks: no tool call, so no turn makes progress."""
    return {
        "id": "chatcmpl-idle",
        "object": "chat.completion",
        "model": request["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hmm."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class FakeOpenAI(BaseHTTPRequestHandler):
    reply = staticmethod(scripted_reply)
    calls: ClassVar[list[str]] = []  # the path of each request, for the tests that count them

    def do_POST(self) -> None:
        assert self.path == "/v1/chat/completions"
        FakeOpenAI.calls.append(self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        payload = json.dumps(self.reply(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


class IdleOpenAI(FakeOpenAI):
    reply = staticmethod(idle_reply)


def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.fixture
def openai_server() -> Iterator[str]:
    yield from serve(FakeOpenAI)


@pytest.fixture
def idle_openai_server() -> Iterator[str]:
    yield from serve(IdleOpenAI)


def run_example(server: str, db: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(sys.executable, str(EXAMPLE), "Ship the release notes", "--thread", "release"),
            *("--base-url", server, "--model", "test-model", "--db", db),
        ],
        env={**subprocess_env(), "OPENAI_API_KEY": "sk-test"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_example_agent_completes_its_goal(openai_server: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'agent.db'}"
    run = run_example(openai_server, db)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "stopped: complete after 1 turn(s)" in run.stdout
    tl = taskloom.connect(db)
    goal = tl.goal("release").get()["goal"]
    assert goal["status"] == "complete" and goal["tokens_used"] == 240
    assert [(c["title"], c["status"]) for c in tl.board("release").list()["cards"]] == [
        ("Draft the notes", "done"),
        ("Publish the notes", "done"),
    ]
    tl.close()


def test_a_rerun_of_a_complete_goal_changes_nothing(openai_server: str, db_url: str) -> None:
    """Run twice, the plan's cards were added twice over (the goal restarted). Both backends."""
    db = db_url
    assert run_example(openai_server, db).returncode == 0
    FakeOpenAI.calls.clear()
    again = run_example(openai_server, db)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "the goal of thread 'release' is already complete" in again.stdout
    assert FakeOpenAI.calls == []  # the model is not asked
    with taskloom.connect(db) as tl:
        goal = tl.goal("release").get()["goal"]
        cards = [c["title"] for c in tl.board("release").list()["cards"]]
    assert goal["status"] == "complete" and goal["tokens_used"] == 240
    assert cards == ["Draft the notes", "Publish the notes"]


def test_example_agent_reruns_after_a_no_progress_stop(
    idle_openai_server: str, tmp_path: Path
) -> None:
    """Running the example again is a user turn: it lifts the one-shot suppression."""
    db = f"sqlite:///{tmp_path / 'agent.db'}"
    for _ in range(2):
        run = run_example(idle_openai_server, db)
        assert run.returncode == 1, run.stdout + run.stderr
        assert "stopped: no_progress after 2 turn(s)" in run.stdout, run.stdout + run.stderr
    with taskloom.connect(db) as tl:
        assert tl.goal("release").get()["goal"]["tokens_used"] == 4 * 15


def question_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A model that asks the user a question, and blocks the goal once it is told that no
    user is present to answer it."""
    last = request["messages"][-1]
    if last["role"] == "user" and "No user is present" in last["content"]:
        reason = {"reason": "Which release do the notes cover, 1.0 or 1.1?"}
        message: dict[str, Any] = {
            "role": "assistant",
            "tool_calls": [call(1, "goal_block", reason)],
        }
    elif last["role"] == "tool":
        message = {"role": "assistant", "content": "Blocked until someone answers."}
    else:
        message = {"role": "assistant", "content": "Do the notes cover 1.0 or 1.1?"}
    return {"choices": [{"message": message}], "usage": {"total_tokens": 10}}


class QuestionOpenAI(FakeOpenAI):
    reply = staticmethod(question_reply)


def test_a_continuation_after_a_question_tells_the_model_nobody_answers(tmp_path: Path) -> None:
    """The model asked the user something; the next, unattended, turn repeated only the goal,
    so the model asked again, twice, and the goal was suppressed with its question lost. The
    turn now says no user is present, and the model blocks the goal on its question."""
    db = f"sqlite:///{tmp_path / 'agent.db'}"
    for server in serve(QuestionOpenAI):
        run = run_example(server, db)
    assert run.returncode == 1 and "stopped: blocked after 2 turn(s)" in run.stdout, run.stdout
    with taskloom.connect(db) as tl:
        goal = tl.goal("release").get()["goal"]
    assert goal["status"] == "blocked" and "1.0 or 1.1" in goal["reason"]


def test_example_agent_says_in_one_line_that_the_endpoint_is_down(db_url: str) -> None:
    """And leaves nothing half-made: an active goal was left behind, with no plan. Both
    backends."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed below: nothing listens there
    db = db_url
    run = run_example(f"http://127.0.0.1:{port}/v1", db)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("Error: the model endpoint") and run.stderr.count("\n") == 1
    with taskloom.connect(db) as tl:
        assert tl.goal("release").get()["goal"] is None
        assert tl.board("release").list()["cards"] == []


class GarbledOpenAI(FakeOpenAI):
    """Answers 200 with whatever ``body`` the test sets: not JSON, no choices, null usage…"""

    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>gateway</html>",
        b'{"choices": []}',
        b'{"choices": [{"message": {"role": "assistant", "tool_calls": "abc"}}]}',
        b'{"choices": [{"message": {"role": "assistant"}}], "usage": {"total_tokens": null}}',
    ],
)
def test_example_agent_says_in_one_line_that_the_reply_is_garbled(
    tmp_path: Path, body: bytes
) -> None:
    """A 200 that is not a chat completion ended in a traceback."""
    GarbledOpenAI.body = body
    for server in serve(GarbledOpenAI):
        run = run_example(server, f"sqlite:///{tmp_path / 'agent.db'}")
        assert "Traceback" not in run.stderr, run.stderr
        if b"null" in body:  # a null usage is no usage: the turn runs, costing nothing
            assert "turn: 0 tokens" in run.stdout, run.stdout + run.stderr
            continue
        last = run.stderr.splitlines()[-1]
        assert run.returncode == 1 and last.startswith("Error: the model endpoint"), run.stderr


class ScriptedOpenAI(FakeOpenAI):
    """Answers each request with the next ``(status, body)`` of ``script``, and keeps the
    Authorization header it was sent."""

    script: ClassVar[list[tuple[int, dict[str, Any]]]] = []
    seen_auth: ClassVar[list[str | None]] = []
    seen_bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen_bodies.append(body)
        type(self).seen_auth.append(self.headers.get("Authorization"))
        status, body = type(self).script.pop(0)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def add_card_reply(tokens: object) -> dict[str, Any]:
    message = {"role": "assistant", "content": None, "tool_calls": [call(1, "todo", ADD)]}
    return {"choices": [{"message": message}], "usage": {"total_tokens": tokens}}


ADD = {"op": "add", "content": "Draft the notes"}
SERVER_ERROR = (500, {"error": {"message": "upstream exploded"}})


def run_scripted(
    script: list[tuple[int, dict[str, Any]]],
    tmp_path: Path,
    key: str = "sk-test",
    url: str | None = None,
    **env: str,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The example run against ``script``, on ``url`` (default: ``agent.db`` in ``tmp_path``,
    the file returned)."""
    ScriptedOpenAI.script, ScriptedOpenAI.seen_auth = list(script), []
    ScriptedOpenAI.seen_bodies = []
    db = tmp_path / "agent.db"
    for server in serve(ScriptedOpenAI):
        run = subprocess.run(
            [
                *(sys.executable, str(EXAMPLE), "Ship the notes", "--thread", "release"),
                *("--base-url", env.get("base_url", server), "--db", url or f"sqlite:///{db}"),
            ],
            env={**subprocess_env(), "OPENAI_API_KEY": key},
            capture_output=True,
            text=True,
            timeout=120,
        )
    return run, db


def test_example_agent_charges_what_a_turn_spent_before_the_endpoint_failed(
    tmp_path: Path,
) -> None:
    """A card added and 300 tokens spent, then a 500: the goal said 0/50000 tokens used."""
    run, db = run_scripted([(200, add_card_reply(300)), SERVER_ERROR], tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "upstream exploded" in run.stderr  # the provider's reason, not just "500"
    with taskloom.connect(f"sqlite:///{db}") as tl:
        assert tl.goal("release").get()["goal"]["tokens_used"] == 300
        assert [c["title"] for c in tl.board("release").list()["cards"]] == ["Draft the notes"]


def test_a_refused_first_call_leaves_no_goal_behind(tmp_path: Path, db_url: str) -> None:
    """Both backends."""
    run, _ = run_scripted([(401, {"error": {"message": "bad key"}})], tmp_path, url=db_url)
    assert run.returncode == 1 and "bad key" in run.stderr, run.stderr
    with taskloom.connect(db_url) as tl:
        assert tl.goal("release").get()["goal"] is None


def test_a_rerun_of_an_unfinished_goal_goes_on_from_its_board(tmp_path: Path, db_url: str) -> None:
    """The same goal, charged on; the model is shown the plan so far instead of planning
    (and adding its cards) again. Both backends."""
    run_scripted([(200, add_card_reply(300)), SERVER_ERROR], tmp_path, url=db_url)
    with taskloom.connect(db_url) as tl:
        first = tl.goal("release").get()["goal"]
    done = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {}}
    run, _ = run_scripted([(200, done)] * 4, tmp_path, url=db_url)
    asked = ScriptedOpenAI.seen_bodies[0]["messages"][1]["content"]
    assert asked.startswith("Ship the notes") and "Draft the notes" in asked, asked
    with taskloom.connect(db_url) as tl:
        goal = tl.goal("release").get()["goal"]
        cards = [c["title"] for c in tl.board("release").list()["cards"]]
    assert goal["goal_id"] == first["goal_id"] and goal["tokens_used"] == 300
    assert cards == ["Draft the notes"], run.stdout


def test_a_rerun_keeps_the_budget_the_user_raised(tmp_path: Path) -> None:
    """A run stopped by its budget, the user raised it (the panel, `taskloom goal budget`):
    a rerun without --budget put it back to 50,000, so the goal stopped at once again."""
    run, db = run_scripted([(200, add_card_reply(60_000)), SERVER_ERROR], tmp_path)
    with taskloom.connect(f"sqlite:///{db}") as tl:
        assert tl.goal("release").get()["goal"]["status"] == "budget_limited"
        tl.goal("release").set_budget(100_000)
    done = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {}}
    run, _ = run_scripted([(200, done)] * 4, tmp_path)
    assert "stopped: no_progress after 2 turn(s)" in run.stdout, run.stdout + run.stderr
    with taskloom.connect(f"sqlite:///{db}") as tl:
        goal = tl.goal("release").get()["goal"]
    assert goal["token_budget"] == 100_000 and goal["status"] == "active"


def test_a_budget_given_on_a_rerun_replaces_the_goals(tmp_path: Path) -> None:
    run_scripted([(200, add_card_reply(300)), SERVER_ERROR], tmp_path)
    done = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {}}
    ScriptedOpenAI.script = [(200, done)] * 4
    db = tmp_path / "agent.db"
    for server in serve(ScriptedOpenAI):
        subprocess.run(
            [
                *(sys.executable, str(EXAMPLE), "Ship the notes", "--thread", "release"),
                *("--base-url", server, "--db", f"sqlite:///{db}", "--budget", "7000"),
            ],
            env={**subprocess_env(), "OPENAI_API_KEY": "sk-test"},
            capture_output=True,
            timeout=120,
        )
    with taskloom.connect(f"sqlite:///{db}") as tl:
        assert tl.goal("release").get()["goal"]["token_budget"] == 7000


def test_the_first_call_of_a_run_that_runs_no_turn_is_charged(tmp_path: Path) -> None:
    """A rerun on a goal out of budget still asks the endpoint once (to check it before
    touching the goal); what that call cost was charged to nobody."""
    run_scripted([(200, add_card_reply(60_000)), SERVER_ERROR], tmp_path)
    run, db = run_scripted([(200, add_card_reply(250))], tmp_path)
    assert "stopped: budget_limited after 0 turn(s)" in run.stdout, run.stdout + run.stderr
    with taskloom.connect(f"sqlite:///{db}") as tl:
        goal = tl.goal("release").get()["goal"]
    assert goal["tokens_used"] == 60_250 and goal["status"] == "budget_limited"


@pytest.mark.parametrize("tokens", [-500, 12.7, "300"])
def test_example_agent_refuses_a_usage_that_is_not_a_whole_count(
    tmp_path: Path, tokens: object
) -> None:
    run, _ = run_scripted([(200, add_card_reply(tokens))], tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "usage.total_tokens" in run.stderr and "turn:" not in run.stdout, run.stdout


def test_example_agent_strips_a_pasted_newline_from_the_key(tmp_path: Path) -> None:
    """httpx refused the header and its error, printed, held the key."""
    done = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {}}
    run, _ = run_scripted([(200, done)] * 2, tmp_path, key="sk-SECRETKEY123\n")
    assert "SECRETKEY" not in run.stdout + run.stderr, run.stderr
    assert ScriptedOpenAI.seen_auth == ["Bearer sk-SECRETKEY123"] * 2
    assert "reports no usage" in run.stderr


def test_example_agent_never_prints_the_key_or_a_url_password(tmp_path: Path) -> None:
    run, _ = run_scripted([], tmp_path, key="sk-SECRET\u201cKEY123")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "SECRET" not in run.stderr and "U+201C at position 10" in run.stderr, run.stderr
    url = "http://user:hunter2pw@127.0.0.1:9/v1"
    run, _ = run_scripted([], tmp_path, base_url=url)
    assert run.returncode == 1 and "hunter2pw" not in run.stderr, run.stderr
    assert "user:[redacted]@127.0.0.1:9" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--budget", "0"], "--budget: must be a whole number of at least 1"),
        (["--max-turns", "0"], "--max-turns: must be a whole number of at least 1"),
        (["--thread", ""], "Error: "),
    ],
)
def test_example_agent_refuses_bad_flags_in_one_line(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    """The user's own mistake is said as such: no traceback, and not blamed on the endpoint."""
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "Ship it", "--db", f"sqlite:///{tmp_path / 'a.db'}", *flags],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert said in run.stderr and "model endpoint" not in run.stderr, run.stderr


def test_example_agent_help_describes_every_flag() -> None:
    """``--help`` exits 0 with help for each flag, its default too (``--model``,
    ``--base-url`` and ``--max-turns`` had none), the environment it reads and its exit
    statuses."""
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--help"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and run.stderr == "", run.stderr
    options: dict[str, str] = {}  # each flag's help, its wrapped lines joined
    for row in run.stdout.split("options:\n")[1].split("\n\n")[0].splitlines():
        if row.startswith("  -"):
            flag, _, rest = row.strip().partition(" ")
            options[flag.rstrip(",")] = rest
        else:
            options[flag.rstrip(",")] += " " + row.strip()
    flags = ["-h", "--thread", "--model", "--base-url", "--budget", "--max-turns", "--db"]
    assert list(options) == [*flags, "--tools"]
    for flag, shown in list(options.items())[1:]:
        words = shown.split(maxsplit=1)  # its value's name, then its help
        assert len(words) == 2 and "(default: " in words[1], (flag, shown)
    assert "objective" in run.stdout and "what the agent should achieve" in run.stdout
    for said in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "exit status:", "130  interrupted"):
        assert said in run.stdout, said


class StalledOpenAI(FakeOpenAI):
    """A model that takes its time: each request is held until ``release`` is set."""

    release = threading.Event()

    def do_POST(self) -> None:
        FakeOpenAI.calls.append(self.path)
        StalledOpenAI.release.wait(60)
        super().do_POST()


def test_ctrl_c_while_the_model_thinks_stops_in_one_line(tmp_path: Path) -> None:
    """Exit status 130, no traceback; the first call had not answered, so no goal is set."""
    db = f"sqlite:///{tmp_path / 'agent.db'}"
    FakeOpenAI.calls.clear()
    StalledOpenAI.release.clear()
    server = serve(StalledOpenAI)
    url = next(server)
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "Ship it", "--base-url", url, "--db", db],
        env={**subprocess_env(), "OPENAI_API_KEY": "sk-test"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # `cmd &` ignores it
    )
    try:
        deadline = time.monotonic() + 60
        while not FakeOpenAI.calls and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        StalledOpenAI.release.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        next(server, None)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err == "interrupted: run it again to go on with the goal\n"
    with taskloom.connect(db) as tl:
        assert tl.goal("goal-agent").get()["goal"] is None
