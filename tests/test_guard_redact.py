"""Credentials in tool output the guard stashes never reach the stash table, the summarizer or
what the model reads back; nothing that is not a credential is changed, and an output passed
through is left as it is unless asked."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.domain.redact import is_secret_key, redact_text
from taskloom.guard import GuardConfig
from taskloom.guard.redact_json import redact_value
from taskloom.tools import ToolContext

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
T1 = ToolContext(thread_id="t1")
STRICT = GuardConfig(redact_pass_through=True)


def stored_contents(tl: Taskloom) -> str:
    with tl.store.read() as tx:
        rows = tx.query("SELECT content, placeholder FROM stash_results")
    return "\n".join(f"{r['content']}\n{r['placeholder']}" for r in rows)


def test_a_key_in_a_large_json_result_is_nowhere(tl: Taskloom) -> None:
    """The key was in the placeholder's preview, in read_result and in the stored row."""
    payload = json.dumps([{"name": f"svc{i}", "api_key": KEY} for i in range(600)])
    g = tl.guard("t1")
    out = g.stash("t", payload)
    assert out.mode == "stashed" and out.result_id
    rid = out.result_id
    assert "600 credential-like values replaced by [redacted]" in out.text
    replies = [
        out.text,
        tl.tools.dispatch("read_result", {"result_id": rid, "path": "$[0]"}, T1).content,
        tl.tools.dispatch("read_result", {"result_id": rid, "page": 1}, T1).content,
        tl.tools.dispatch(
            "extract_from_result", {"result_id": rid, "query": "api_key svc3"}, T1
        ).content,
        stored_contents(tl),
    ]
    for text in replies:
        assert "ABCDEFGHIJ" not in text and "[redacted]" in text, text[:300]


def test_a_secret_named_field_is_redacted_alike_in_the_preview_and_the_stored_copy(
    tl: Taskloom,
) -> None:
    """Given as JSON text, the value was redacted in the preview but stored and read back."""
    rows = [{"id": i, "jwt": f"opaqueSessionValue{i:05d}"} for i in range(600)]
    g = tl.guard("t1")
    out = g.stash("sessions", json.dumps(rows))
    assert out.result_id and '$[0].jwt: "[redacted]"' in g.read(out.result_id, path="$[0].jwt")
    assert "opaqueSession" not in stored_contents(tl)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_secret_in_a_json_lines_record_is_nowhere(tl: Taskloom, newline: str) -> None:
    """JSON Lines (a log's records, jq -c) is text, not one JSON document, so its records'
    "password" and "api_key" values, which no credential shape matches, were stored,
    previewed and read back as the tool wrote them; each record that is one JSON document is
    now redacted as a document is, and every other character stays."""
    records = [
        {"id": i, "user": f"u{i}", "password": "hunter2plain", "api_key": "plainApiValue77",
         "headers": {"Authorization": "Bearer opaqueBearer42"}, "tokens": i}
        for i in range(400)
    ]  # fmt: skip
    lines = [json.dumps(r) for r in records]
    lines[3] = '{"id": 3, "note": "no secret here"}'
    lines[5] = "plain log line: password is not a key here"
    output = newline.join(lines) + newline
    g = tl.guard("t1")
    out = g.stash("events", output)
    assert out.mode == "stashed" and out.result_id
    rid = out.result_id
    replies = [
        out.text,
        tl.tools.dispatch("read_result", {"result_id": rid, "page": 1}, T1).content,
        tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": "u7"}, T1).content,
        tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": "/u399/"}, T1).content,
        stored_contents(tl),
    ]
    for text in replies:
        for secret in ("hunter2plain", "plainApiValue77", "opaqueBearer42"):
            assert secret not in text, text[:300]
    first = g.read(rid, lines="1-6").split("\n", 1)[1]
    assert first.count(newline) == 5  # the lines as written, their line breaks too
    first_lines = first.split(newline)
    assert first_lines[0] == (
        '{"id": 0, "user": "u0", "password": "[redacted]", "api_key": "[redacted]",'
        ' "headers": {"Authorization": "Bearer [redacted]"}, "tokens": 0}'
    )
    assert [first_lines[3], first_lines[5]] == [lines[3], lines[5]]
    assert "1,194 credential-like values replaced" in out.text  # 398 records, 3 each


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        (f"OPENAI_API_KEY={KEY}\nHOME=/root", "OPENAI_API_KEY=[redacted]\nHOME=/root"),
        ("token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ok", "token [redacted] ok"),
        ("id AKIAIOSFODNN7EXAMPLE, npm_" + "a" * 36, "id [redacted], [redacted]"),
        (
            "DB_PASSWORD=Xy7[k9$zQ\nREDIS_PASSWORD=p&ssw0rd",
            "DB_PASSWORD=[redacted]\nREDIS_PASSWORD=[redacted]",
        ),
        ("export MYSQL_ROOT_PASSWORD='123456'", "export MYSQL_ROOT_PASSWORD=[redacted]"),
        (
            "run --password=hunter2xyz --api-key=abcd1234",
            "run --password=[redacted] --api-key=[redacted]",
        ),
        (
            "//registry.npmjs.org/:_authToken=abc123def456",
            "//registry.npmjs.org/:_authToken=[redacted]",
        ),
        (
            "xoxb-1234567890-abcdefghij AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "[redacted] [redacted]",
        ),
        (
            'curl -H "Authorization: Bearer abcdef0123456789"',
            'curl -H "Authorization: Bearer [redacted]"',
        ),
        ("> authorization: token 0123456789abcdef", "> authorization: token [redacted]"),
        (
            "extraheader = AUTHORIZATION: basic eC1hY2Nlc3M6",
            "extraheader = AUTHORIZATION: basic [redacted]",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nok",
            "[redacted]\nok",
        ),
        ('{"password":"hunter2","user":"bob"}', '{"password":"[redacted]","user":"bob"}'),
        ("db: postgres://bob:hunter2@db:5432/app", "db: postgres://bob:[redacted]@db:5432/app"),
    ],
)
def test_credentials_are_redacted(tl: Taskloom, output: str, kept: str) -> None:
    assert tl.guard("t1", STRICT).wrap("shell", output) == kept


@pytest.mark.parametrize(
    "code",
    [
        'token := os.Getenv("T")\nif password == "" {}\n',
        "interface User {\n  password: string;\n  token?: string;\n}\n",
        "pub struct S { pub token: Option<String>, }\n",
        "Token nextToken = lexer.next();\npassword = ask()\n",
        "Basic authentication is disabled\nToken refreshed successfully\n",
        "token = request.headers['x']\nPWD=/home/me\nsk-short\n",
        'begin = "-----BEGIN RSA PRIVATE KEY-----"\nx := 1\nend = "-----END RSA PRIVATE KEY-----"',
        "password: can't be blank\nsecret: see the vault\n",
    ],
)
def test_code_and_prose_are_not_credentials(code: str) -> None:
    """Comparisons, Go's :=, type annotations and prose after "Basic" were redacted, and a
    BEGIN marker in one line and an END marker in another took all the code between."""
    assert redact_text(code) == (code, 0)


def test_a_key_marker_in_one_record_and_its_end_in_another_lose_nothing(tl: Taskloom) -> None:
    rows = [{"i": i, "line": f"log line {i} ok"} for i in range(400)]
    rows[10]["line"] = "expected -----BEGIN RSA PRIVATE KEY----- header"
    rows[300]["line"] = "missing -----END RSA PRIVATE KEY----- footer"
    g = tl.guard("t1")
    out = g.stash("logs", json.dumps(rows))
    assert out.result_id and "$[11].i: 11" in g.read(out.result_id, path="$[11].i")
    assert "missing -----END RSA" in g.read(out.result_id, path="$[300].line")


@pytest.mark.parametrize(
    "key",
    ["password", "clientSecret", "api_key", "refresh_token", "privateKey", "jwt", "auth",
     "aws_secret_access_key", "DB_PASSWORD", "apiKey", "id_token", "APIkey", "GITHUBtoken",
     "PRIVATEkey"],
)  # fmt: skip
def test_a_key_ending_in_a_secret_s_name_is_secret(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    ["secretName", "tokenUrl", "password_policy", "PasswordLastUsed", "tough-cookie",
     "nextPageToken", "next_page_token", "continuation_token", "token_count", "max_tokens",
     "author", "auth_method", "session_id", "ssh_key_fingerprint", "csrf_token", "key",
     "MAXtokens", "XMLauthor"],
)  # fmt: skip
def test_a_key_that_only_contains_a_secret_s_name_is_not(key: str) -> None:
    assert not is_secret_key(key)


PLURAL_SECRETS = [
    "secrets", "client_secrets", "clientSecrets", "client-secrets", "tokens", "access_tokens",
    "accessTokens", "auth_tokens", "refresh_tokens", "id_tokens", "credentials", "CREDENTIALS",
    "passphrases", "jwts", "passwords", "api_keys", "private_keys", "API_KEYS",
]  # fmt: skip
MODEL_TOKENS = [
    "token_count", "tokens_used", "max_tokens", "prompt_tokens", "total_tokens",
    "completion_tokens", "input_tokens", "maxOutputTokens", "cache_read_input_tokens",
    "max_new_tokens", "special_tokens", "next_page_tokens", "csrf_tokens",
]  # fmt: skip


@pytest.mark.parametrize("key", PLURAL_SECRETS)
def test_the_plural_of_a_secret_s_name_is_secret(key: str) -> None:
    """``secrets``, ``clientSecrets``, ``tokens``, ``access_tokens`` and ``credentials`` were
    stored in clear while ``passwords`` and ``api_keys`` were redacted."""
    assert is_secret_key(key)


@pytest.mark.parametrize("key", [*MODEL_TOKENS, "secretNames", "tokenUrls", "author_tokens_url"])
def test_a_count_or_a_vocabulary_of_tokens_is_not_secret(key: str) -> None:
    assert not is_secret_key(key)


def test_plural_secret_keys_are_redacted_where_the_model_reads_them(tl: Taskloom) -> None:
    """The QA repro: 300 objects whose keys hold ``["v"]``, stashed, then ``$[0]`` read."""
    keys = PLURAL_SECRETS + MODEL_TOKENS
    rows = [{k: ["v"] for k in keys} | {"max_tokens": 4096, "n": i} for i in range(300)]
    out = tl.guard("t1").stash("api", json.dumps(rows))
    assert out.mode == "stashed" and out.result_id
    reply = tl.tools.dispatch("read_result", {"result_id": out.result_id, "path": "$[0]"}, T1)
    first = json.loads(reply.content.split("\n$[0]: ", 1)[1])
    assert {k: first[k] for k in PLURAL_SECRETS} == {k: ["[redacted]"] for k in PLURAL_SECRETS}
    assert {k: first[k] for k in MODEL_TOKENS} == {k: ["v"] for k in MODEL_TOKENS} | {
        "max_tokens": 4096
    }


def test_counters_stay_whether_numbers_or_strings() -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": "30", "total_tokens": 42.0,
             "max_tokens": "4096", "token_count": "7", "tokens_used": 9, "tokens": 3}  # fmt: skip
    assert redact_value(usage) == (usage, 0)


def test_the_keys_of_a_permissions_object_name_scopes_not_secrets() -> None:
    """GitHub's installation permissions (``"secrets": "read"``) and a workflow's
    (``"id-token": "write"``) are access levels: ``id-token`` lost its value."""
    value = {
        "permissions": {"secrets": "read", "id-token": "write", "organization_secrets": "read"},
        "default_permissions": {"dependabot_secrets": "write"},
        "config": {"secrets": ["hunter2"], "id-token": "eyJ0"},
    }
    out, count = redact_value(value)
    assert count == 2 and out["config"] == {"secrets": ["[redacted]"], "id-token": "[redacted]"}
    assert {k: out[k] for k in ("permissions", "default_permissions")} == {
        k: value[k] for k in ("permissions", "default_permissions")
    }


def test_values_under_secret_keys_lists_included_and_only_those() -> None:
    value = {
        "api_keys": ["live_abcdef123456"],
        "password": "123456",
        "client_secret": "s",
        "secretName": "web-tls",
        "tokenUrl": "https://ex.com/token",
        "permissions": {"secrets": "read"},
        "dependencies": {"tough-cookie": "^4.1.3"},
        "token": 7,
        "apiKey": "",
        "Env": ["POSTGRES_PASSWORD=Xy7(k9zQ", "PATH=/usr/bin"],
    }
    out, count = redact_value(value)
    assert count == 4
    assert out["api_keys"] == ["[redacted]"] and out["password"] == "[redacted]"
    assert out["client_secret"] == "[redacted]"
    assert out["Env"] == ["POSTGRES_PASSWORD=[redacted]", "PATH=/usr/bin"]
    for kept in ("secretName", "tokenUrl", "permissions", "dependencies", "token", "apiKey"):
        assert out[kept] == value[kept]
    assert value["password"] == "123456"  # the input is untouched


def test_a_small_output_passes_through_as_the_tool_returned_it(tl: Taskloom) -> None:
    """A coding agent reading a config file to change one line, shown ``[redacted]``, would
    write ``[redacted]`` back over the user's key."""
    env = f"OPENAI_API_KEY={KEY}\nDEBUG=1\n"
    assert tl.guard("t1").wrap("read_file", env) == env
    assert tl.guard("t1").wrap("api", {"password": "x"}) == '{"password":"x"}'
    assert tl.guard("t1", STRICT).wrap("api", {"password": "x"}) == '{"password":"[redacted]"}'
    assert stored_contents(tl) == ""


def test_redaction_can_be_turned_off_and_replies_give_what_was_stored(tl: Taskloom) -> None:
    """Replies were redacted again on the way out, whatever the thread's configuration."""
    tl.guard_config = GuardConfig(redact=False, threshold_tokens=100)
    out = tl.guard("t1").stash("t", json.dumps([{"api_key": KEY}] * 60))
    assert KEY in stored_contents(tl) and "redacted" not in out.text
    assert out.result_id
    reply = tl.tools.dispatch("read_result", {"result_id": out.result_id, "path": "$[0]"}, T1)
    assert KEY in reply.content


def test_json_stays_json_after_redaction() -> None:
    text = json.dumps(
        {"cmd": f'export TOKEN="{KEY}" && run', "pem": "-----BEGIN PRIVATE KEY-----\nAB"}
    )
    out, count = redact_text(text)
    assert count == 2 and KEY not in out
    assert json.loads(out) == {"cmd": 'export TOKEN="[redacted]" && run', "pem": "[redacted]"}


PROVIDER_KEYS = [
    ("stripe secret key", "sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWxYz0123", "[redacted]"),
    ("stripe restricted key", "rk_test_51HxYzAbCdEfGhIjKlMnOpQr", "[redacted]"),
    ("stripe webhook secret", "whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123", "[redacted]"),
    ("gitlab token", "glpat-AbCdEfGhIjKlMnOpQrSt", "[redacted]"),
    ("hugging face token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "[redacted]"),
    (
        "sendgrid key",
        "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq",
        "[redacted]",
    ),
    ("pypi token", "pypi-AgEIcHlwaS5vcmcCJGE4ZjY3YTBmLTk3YWUtNDRmMi1iZGQ4LWE5ZjE5", "[redacted]"),
    ("digitalocean token", "dop_v1_" + "0123456789abcdef" * 4, "[redacted]"),
    ("google oauth token", "ya29.a0AfH6SMBxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "[redacted]"),
    (
        "slack webhook",
        "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
        "https://hooks.slack.com/services/[redacted]",
    ),
    (
        "azure connection string",
        "AccountName=acct;AccountKey=abcdEFGH1234abcdEFGH1234abcdEFGH1234abcd==;Suffix=x",
        "AccountName=acct;AccountKey=[redacted];Suffix=x",
    ),
    (
        "aws credentials file",
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPL\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPL\naws_secret_access_key = [redacted]\n",
    ),
]


@pytest.mark.parametrize(
    ("what", "text", "redacted"), PROVIDER_KEYS, ids=[p[0] for p in PROVIDER_KEYS]
)
def test_common_providers_keys_are_redacted(what: str, text: str, redacted: str) -> None:
    """Stripe, GitLab, Hugging Face, SendGrid, PyPI, DigitalOcean, Google OAuth, Slack
    webhook, Azure storage and AWS credentials-file secrets were stored and shown as they
    were."""
    assert redact_text(text)[0] == redacted, what


def test_provider_keys_never_reach_the_stash(tl: Taskloom) -> None:
    """A large output holding those keys is stashed without any of them."""
    lines = [f"line {i}: {text}" for i in range(200) for _, text, _ in PROVIDER_KEYS]
    out = tl.guard("t1").stash("env_dump", "\n".join(lines))
    assert out.mode == "stashed"
    stored = stored_contents(tl)
    secrets = [
        "sk_live_51HxYz",
        "rk_test_51HxYz",
        "whsec_AbCd",
        "glpat-AbCd",
        "hf_AbCd",
        "SG.abcdefghij",
        "pypi-AgEI",
        "dop_v1_0123",
        "ya29.a0Af",
        "abcdefghijklmnopqrstuvwx",
        "abcdEFGH1234",
        "wJalrXUtnFEMI",
    ]
    assert [secret for secret in secrets if secret in stored] == []


@pytest.mark.parametrize(
    "text",
    [
        "from huggingface_hub import hf_hub_download_from_the_pretrained_models",
        "the sk_live_ prefix marks live keys; rk_test_ test ones",
        "see https://hooks.slack.com/services/ for webhooks",
        "glpat- tokens, SG. keys, ya29. tokens and pypi- tokens",
        "aws_secret_access_key = $AWS_SECRET_ACCESS_KEY",
    ],
)
def test_mentions_of_those_shapes_are_kept(text: str) -> None:
    assert redact_text(text) == (text, 0)


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


PRIVATE_PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n"
    "-----END RSA PRIVATE KEY-----\n"
)
CERT_PEM = (
    "-----BEGIN CERTIFICATE-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END CERTIFICATE-----\n"
)


def test_a_private_key_in_base64_is_redacted_and_a_certificate_kept(tl: Taskloom) -> None:
    """A kubeconfig's client-key-data and a Kubernetes secret's tls.key hold a PEM private
    key in base64: it was stored, previewed and read back whole."""
    key, cert = _b64(PRIVATE_PEM), _b64(CERT_PEM)
    kubeconfig = (
        f"users:\n- user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n"
    )
    assert redact_text(kubeconfig) == (kubeconfig.replace(key, "[redacted]"), 1)
    secrets = [{"data": {"tls.crt": cert, "tls.key": key}, "n": i} for i in range(400)]
    out = tl.guard("t1").stash("kubectl_get_secrets", json.dumps(secrets))
    assert out.mode == "stashed"
    stored = stored_contents(tl)
    assert key not in stored and key[:40] not in stored
    assert cert in stored


@pytest.mark.parametrize(
    "url", ["https://admin:hunter2pass@db.example.com/app", "http://[not-an-address/x"]
)
def test_an_object_whose_url_splits_badly_is_stashed_not_raised(tl: Taskloom, url: str) -> None:
    """Compaction splits an object's ``url`` to find links derivable from it, and
    ``urlsplit`` raises on ``http://[x/`` and on a password redacted to ``[redacted]`` (a
    bad IPv6 address to it): wrapping a listing of database URLs raised ValueError."""
    rows = [{"id": i, "url": url, "html_url": url + "/view"} for i in range(1500)]
    text = tl.guard("t1").wrap("list_databases", json.dumps(rows))
    assert text.startswith("[stashed tool output:")
    assert "hunter2pass" not in stored_contents(tl)


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            "machine api.example.com login bob password hunter2xyz",
            "machine api.example.com login bob password [redacted]",
        ),
        (
            "machine git.example.com\n  login bob\n  password hunter2xyz\n",
            "machine git.example.com\n  login bob\n  password [redacted]\n",
        ),
        (
            "connecting: host=db.internal user=app password=hunter2xyz dbname=orders",
            "connecting: host=db.internal user=app password=[redacted] dbname=orders",
        ),
        (
            "Server=tcp:sql.example.net,1433;Initial Catalog=db;User ID=bob;Password=hunter2xyz;",
            "Server=tcp:sql.example.net,1433;Initial Catalog=db;User ID=bob;Password=[redacted];",
        ),
        ("dsn: dbname=x password='hunter two'", "dsn: dbname=x password=[redacted]"),
    ],
)
def test_netrc_and_connection_string_passwords_are_redacted(text: str, redacted: str) -> None:
    """A ``.netrc`` an agent printed and a connection string a log echoed kept their
    passwords: neither is a line that is one setting nor a flag."""
    assert redact_text(text)[0] == redacted


@pytest.mark.parametrize(
    "text",
    [
        "conn = connect(host=h, user=u, password=pw)",
        "password=$PGPASSWORD host=db",
        "password required",
        "the password hunter2xyz was rotated",
        "retry=3 password=hunter2xyz",  # no other key of a connection string
    ],
)
def test_code_prose_and_lone_settings_keep_their_password_words(text: str) -> None:
    assert redact_text(text) == (text, 0)


def test_a_session_cookie_is_redacted_and_a_cookie_package_kept() -> None:
    """A HAR file or an HTTP client's debug output holds the session cookie under
    ``Cookie``/``Set-Cookie``: it was kept, though it logs in as the user."""
    har = {
        "headers": [{"name": "Cookie", "value": "sid=hunter2xyzabc"}],
        "response": {"Set-Cookie": "sid=hunter2xyzabc; HttpOnly", "cookie": "a=hunter2xyzabc"},
        "dependencies": {"tough-cookie": "^4.1.3"},
    }
    redacted, n = redact_value(har)
    assert n == 3 and "hunter2xyzabc" not in json.dumps(redacted)
    assert redacted["dependencies"] == {"tough-cookie": "^4.1.3"}
