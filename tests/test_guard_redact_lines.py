"""Credentials written as a setting, a command line, a URL, a JSON key or a number are redacted
like the rest; code, prose, help texts and config that only name a secret are left alone."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.domain.redact import redact_text
from taskloom.guard import GuardConfig
from taskloom.guard.redact_json import redact_json_text, redact_value
from taskloom.tools import ToolContext
from tests.test_guard_json_text import stored

GHP = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
GHO = "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
STRICT = GuardConfig(redact_pass_through=True)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("db_password=hunter2", "db_password=[redacted]"),
        ("export api_token=abc123def", "export api_token=[redacted]"),
        ("Password: hunter2", "Password: [redacted]"),
        ("password: hunter2", "password: [redacted]"),
        ("  - password: hunter2 # dev only", "  - password: [redacted] # dev only"),
        ("    POSTGRES_PASSWORD: example", "    POSTGRES_PASSWORD: [redacted]"),
        ("      - MYSQL_ROOT_PASSWORD=rootpw", "      - MYSQL_ROOT_PASSWORD=[redacted]"),
        ("spring.datasource.password=s3cret!", "spring.datasource.password=[redacted]"),
        ("ossrhPassword=Xy7k9zQ", "ossrhPassword=[redacted]"),
        ("db_password=!x9@abc", "db_password=[redacted]"),
        ("X-Api-Key: abcdef123456", "X-Api-Key: [redacted]"),
        ('password: "hunter2"', "password: [redacted]"),
        ("client_secret: 'Zx9_abc'", "client_secret: [redacted]"),
        ("password: 123456", "password: [redacted]"),
        ("+db_password=hunter2", "+db_password=[redacted]"),
    ],
)
def test_a_setting_in_any_case_loses_its_value(line: str, kept: str) -> None:
    """Only an upper-case ``NAME=value`` was recognised: ``db_password=hunter2`` and YAML's
    ``password: hunter2`` were stored in clear."""
    assert redact_text(line) == (kept, 1)


COMPOSE = """services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: app
      POSTGRES_PASSWORD: Xy7k9zQ
      PGDATA: /var/lib/postgresql/data
  web:
    environment:
      - DATABASE_URL=postgres://app:Xy7k9zQ@db:5432/app
      - secret_key=9f8e7d6c
      - API_TOKEN_FILE=/run/secrets/api_token
"""


def test_a_compose_file_loses_its_secrets_and_nothing_else() -> None:
    out, count = redact_text(COMPOSE)
    assert count == 3 and "Xy7k9zQ" not in out and "9f8e7d6c" not in out
    assert out == COMPOSE.replace("Xy7k9zQ", "[redacted]").replace("9f8e7d6c", "[redacted]")


CODE = [
    # Python: keyword arguments on their own lines, annotations, defaults
    "client = Client(\n    url=url,\n    token=token\n)\n",
    "client = Client(\n    api_key=api_key,\n    password=self.password,\n)\n",
    "other = Client(url=url,\n               token=tok)\n",
    "class Settings(BaseModel):\n    password: str\n    api_key: SecretStr\n"
    "    token: Optional[str] = None\n    secret: str | None\n"
    "    db_password: pydantic.SecretStr\n",
    "def connect(password=None, token=''):\n    password = ask()\n    if password == '':\n",
    # TypeScript, GraphQL, Rust, Swift
    "interface User {\n  password: string;\n  token?: string;\n  apiKey: string\n}\n",
    "const o = {\n  user,\n  password: pw\n}\n",
    "type Mutation {\n  password: String!\n}\n",
    "let password: String = prompt()\nlet token: Token\n",
    # YAML that references, templates or types a secret
    "password: ${DB_PASSWORD}\ntoken: ${{ secrets.GITHUB_TOKEN }}\nsecrets: inherit\n",
    "permissions:\n  id-token: write\n  contents: read\nauth: ldap\n",
    'password: !vault |\npassword: "{{ vault_db_password }}"\ntoken: *default_token\n',
    "credentials: ~/.aws/credentials\ncredential: /etc/creds.json\napi_key: <your-api-key>\n",
    'password: null\ntoken: ~\npassword: "********"\npassword: xxxxxxxx\n',
    "db_password=$DB_PASSWORD\ntoken=${TOKEN}\npassword=\n",
    "  password: Password\n  password_confirmation: Confirm password\n",
    "token: 3.0-\nversion: 2\n# password: hunter2\n",
    # prose, logs, settings about a secret
    "password: can't be blank\nToken: expired\nPassword: required\ntoken: invalid\n",
    "password_policy: strict\npassword_min_length: 12\nmax_tokens: 4096\n",
    "next_page_token: abc123\nsecret_name: my-secret\npasswd:         files\n",
    # commands whose -u, -p or secret flag is no credential
    "docker run -u 1000:1000 -p 8080:80 image\ndocker run -p8080:80 -u node:node image\n",
    "git push -u origin main\nssh -p 22 host && mkdir -p /tmp/x\n",
    "psql --password dbname\ngh auth login --with-token < token.txt\n",
    'curl -u "$USER:$PASS" https://x\ncurl -u user https://x\nmysql -p db\nmysql -p$PWD db\n',
    "  --token TOKEN        Bearer token\n  --password string   Password for basic auth\n",
    "  --api-key <key>\nrun --max-tokens 100 --tokens 5\nuse the --token flag to log in\n",
    "docker build --secret id=npmrc,src=$HOME/.npmrc .\nvault read --secret @file.json\n",
    # URLs with an @ in the path
    "https://registry.npmjs.org/@types/node\nhttps://discord.com/api/users/@me\n",
    "http://localhost:3000/packages/foo@1.2.3\nhttps://host:8080/a@b\n",
]


@pytest.mark.parametrize("code", CODE)
def test_code_config_and_prose_that_name_a_secret_are_not_credentials(code: str) -> None:
    """A false redaction is data lost: a keyword argument, a type, a reference, a status,
    a help text, a user id or a port is what the agent came to read."""
    assert redact_text(code) == (code, 0)


@pytest.mark.parametrize(
    ("command", "kept"),
    [
        ("curl -u user:pass https://x", "curl -u user:[redacted] https://x"),
        ("curl --user user:pass https://x", "curl --user user:[redacted] https://x"),
        ("curl -u 'user:my pass' https://x", "curl -u 'user:[redacted]' https://x"),
        ('curl -u "bob:p:w" https://x', 'curl -u "bob:[redacted]" https://x'),
        ("curl -uadmin:s3cret https://x", "curl -uadmin:[redacted] https://x"),
        ("/usr/bin/curl -U proxy:pw https://x", "/usr/bin/curl -U proxy:[redacted] https://x"),
        (
            "curl -s \\\n  -u deploy:t0ps3cret \\\n  https://x",
            "curl -s \\\n  -u deploy:[redacted] \\\n  https://x",
        ),
        ("mysql -u root -pSECRET db", "mysql -u root -p[redacted] db"),
        ("mysqldump -uroot -p'pa ss' db", "mysqldump -uroot -p[redacted] db"),
        (
            "run --password hunter2 --token abc123 --verbose",
            "run --password [redacted] --token [redacted] --verbose",
        ),
        ("kubectl --token eyJhbGciOi123 get pods", "kubectl --token [redacted] get pods"),
        ('login --client-secret "a b c"', "login --client-secret [redacted]"),
    ],
)
def test_a_command_line_loses_its_credentials(command: str, kept: str) -> None:
    """``curl -u user:pass``, ``--password value`` with a space and ``mysql -pSECRET``
    were stored in clear: only ``--password=value`` was recognised."""
    assert redact_text(command)[0] == kept


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://user:p@ss/w0rd@host/path", "https://user:[redacted]@host/path"),
        ("https://user:p@ss@host:8443/path", "https://user:[redacted]@host:8443/path"),
        ("https://u:p@ss.word@host/x", "https://u:[redacted]@host/x"),
        ("postgresql://app:s3cr3t/PW@db.example/tl", "postgresql://app:[redacted]@db.example/tl"),
        ("redis://:s3cr3t@localhost:6379/0", "redis://:[redacted]@localhost:6379/0"),
    ],
)
def test_a_url_password_is_redacted_to_the_host_s_at(url: str, kept: str) -> None:
    """A password holding ``@`` or ``/`` kept all but its first piece: ``p@ss/w0rd`` became
    ``[redacted]@ss/w0rd``; a Redis URL has no user."""
    assert redact_text(url)[0] == kept


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        (
            "https://user:pw@registry.npmjs.org/@scope/pkg",
            "https://user:[redacted]@registry.npmjs.org/@scope/pkg",
        ),
        (
            "git+https://user:tok3n@github.com/org/repo.git@v1.0",
            "git+https://user:[redacted]@github.com/org/repo.git@v1.0",
        ),
        (
            "https://user:pw@host/path?email=a@b.com",
            "https://user:[redacted]@host/path?email=a@b.com",
        ),
        (
            "go https://a:x@h1/p?next=https://b:y@h2/q",
            "go https://a:[redacted]@h1/p?next=https://b:[redacted]@h2/q",
        ),
    ],
)
def test_an_at_in_the_path_or_the_query_is_not_the_host_s(url: str, kept: str) -> None:
    """The password runs to the last ``@`` before the host, not into the path (a scoped
    package, a git ref), the query or a URL the query holds."""
    assert redact_text(url)[0] == kept


def test_a_token_used_as_a_json_key_is_redacted_and_no_value_is_lost() -> None:
    """The text rules knew ``ghp_…`` but JSON keys were never read: a map keyed by tokens
    was stored with every token."""
    value = {GHP: {"scopes": ["repo"]}, GHO: {"scopes": []}, "[redacted]": 1, "n": 2}
    out, count = redact_value(value)
    assert count == 2
    assert out == {
        "[redacted] 2": {"scopes": ["repo"]},
        "[redacted] 3": {"scopes": []},
        "[redacted]": 1,
        "n": 2,
    }
    assert GHP in value  # the input is untouched


def test_a_token_keyed_result_is_stored_without_its_tokens(tl: Taskloom) -> None:
    rows = {f"ghp_{i:036d}": {"login": f"user{i}", "scopes": ["repo"]} for i in range(300)}
    out = tl.guard("t1").stash("tokens", json.dumps(rows))
    assert out.result_id and "300 credential-like values" in out.text
    assert "ghp_0" not in stored(tl)
    reply = tl.tools.dispatch(
        "read_result", {"result_id": out.result_id, "path": "$..login"}, ToolContext("t1")
    )
    assert "300 matches" in reply.content
    assert "$['[redacted] 2'].login: \"user1\"" in reply.content


def test_a_number_under_a_password_s_key_is_redacted_a_count_is_not() -> None:
    """``{"password": 123456}`` was stored in clear: only strings were read. A token's number
    is an id or a count, a plural's a count, and a pin may be a pin of a board."""
    value = {
        "password": 123456,
        "db_passwd": 42.5,
        "client_secret": 987654321,
        "pin": 1234,
        "token": 7,
        "secrets": 3,
        "max_tokens": 4096,
        "is_secret": True,
        "permissions": {"secret": 1},
    }
    out, count = redact_value(value)
    assert count == 3
    assert out == value | {
        "password": "[redacted]",
        "db_passwd": "[redacted]",
        "client_secret": "[redacted]",
    }


def test_a_number_under_a_password_s_key_is_redacted_in_json_kept_as_text() -> None:
    """A number beyond a double keeps a document as text, where only strings were replaced."""
    text = '{"big": 123456789012345678901234567890, "password" : -12.5e3, "token": 7}'
    out, count = redact_json_text(text)
    assert count == 1
    assert out == '{"big": 123456789012345678901234567890, "password" : "[redacted]", "token": 7}'


@pytest.mark.parametrize(
    "value",
    [
        {"cmd": "--token=", "n": "x"},
        {"cmd": '--token="abc123"', "n": 1},
        {"npmrc": "//registry.npmjs.org/:_authToken=abc123", "n": 1},
        {"cmd": "login --password ", "n": ", "},
        {"a": "password: ", "b": "x"},
    ],
)
def test_json_text_stays_json_whatever_a_string_ends_with(value: dict[str, object]) -> None:
    """A flag or an ``.npmrc`` line at the end of a string took the closing quote for its
    value: ``{"cmd": "--token=", "n": …}`` became ``{"cmd": "--token=[redacted]n": …}``."""
    for text in (json.dumps(value), json.dumps(value, indent=2)):
        out, _count = redact_text(text)
        assert json.loads(out).keys() == value.keys(), out


def test_an_output_with_new_shapes_is_stored_redacted(tl: Taskloom) -> None:
    log = "\n".join(
        [
            "$ curl -u deploy:t0ps3cret https://ci.example/api",
            "$ mysql -u root -pR00tPw db < dump.sql",
            "$ run --password hunter2xyz",
            "db_password=Zq9secret",
            "remote: https://bob:p@ss/w0rd@git.example/repo.git",
        ]
        + [f"step {i} ok" for i in range(2000)]
    )
    out = tl.guard("t1").stash("shell", log)
    assert out.result_id and "5 credential-like values" in out.text
    kept = stored(tl)
    for secret in ("t0ps3cret", "R00tPw", "hunter2xyz", "Zq9secret", "p@ss", "w0rd"):
        assert secret not in kept


ADVERSARIAL = [
    "curl " + "-u a:" * 200_000,
    "curl " + "-ua" * 330_000,
    "://a:" * 200_000,
    "://a:" + "a@" * 500_000,
    "http://u:" + "@a/" * 330_000,
    "://a:" + "?" * 1_000_000,
    "password: " + "x " * 500_000,
    "password=\n" * 100_000,
    "--password " * 90_000,
    "-token " + "a" * 1_000_000,
    "curl \\\n" * 140_000,
    "mysql -p" * 125_000,
    "password: " + "x" * 1_000_000 + " y",
    " " * 1_000_000 + "password: x",
    "password: x" + " #" * 500_000,
    "curl -u '" + "a:" * 500_000,
    'curl -u "a:' + "b" * 1_000_000,
    "- " * 500_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_a_megabyte_of_adversarial_input_is_redacted_in_one_pass(text: str) -> None:
    """Every pattern runs in time linear in the output: a nested repeat would hang here."""
    redact_text(text)


def test_many_token_keys_are_kept_apart_in_one_pass() -> None:
    value = {f"ghp_{i:036d}": i for i in range(20_000)}
    out, count = redact_value(value)
    assert count == 20_000 and sorted(out.values()) == list(range(20_000))
