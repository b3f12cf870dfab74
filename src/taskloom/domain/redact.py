"""Redact credentials from text the product stores and shows: the tool output the guard
stashes, and the errors that failed turns and failed tasks leave behind.

A stashed result goes into the stash table, the placeholder's preview, the summarizer's prompt
and every read back; a goal's reason and a task's ``last_error`` go into every snapshot, event
and panel view. The project's rule is that secrets go into none of them. Only what is a
credential beyond doubt is replaced by ``[redacted]``, since anything else replaced is data
lost (a stored copy is what the model reads back and may write back into a file):

- credential shapes, wherever they are (a JSON object's keys too): OpenAI/Anthropic ``sk-…``
  keys, GitHub ``ghp_``/``gho_``/``ghs_``/``ghu_``/``ghr_``/``github_pat_`` tokens, npm
  ``npm_…`` tokens, AWS ``AKIA``/``ASIA`` key ids, Slack ``xox?-…`` tokens and webhook
  URLs' paths, Google ``AIza…`` keys and ``ya29.…`` tokens, Stripe ``sk_live_``/``rk_test_``/
  ``whsec_`` keys, GitLab ``glpat-`` tokens, Hugging Face ``hf_`` tokens, SendGrid ``SG.``
  keys, PyPI ``pypi-`` tokens, DigitalOcean ``dop_v1_`` tokens, an Azure connection
  string's ``AccountKey=``, an AWS credentials file's ``aws_secret_access_key = …``, JWTs,
  and PEM private key blocks, as text, in a JSON string (its line breaks escaped once or
  more), as a JSON array of its lines, or in base64 (a kubeconfig's ``client-key-data``);
- the credential of an ``Authorization:`` header (any case, any scheme), and the password of a
  ``scheme://user:password@host`` URL, all of it up to the last ``@`` before the host
  (``p@ss/w0rd``), an ``@`` in the path or the query being no host's;
- the value of an environment line (``DB_PASSWORD=…``, ``export API_TOKEN=…``, an upper-case
  name at the start of a line) or a command-line flag (``--password=…``) whose name ends in
  a secret's name;
- the value of a line that is one setting whose name names one secret (:func:`is_secret_key`,
  not a plural), any case: ``db_password=hunter2``, ``export api_token=…``, YAML's
  ``password: hunter2``; the value one word or one quoted string and nothing after it but a
  comment, and no reference, path, type, keyword or status (:func:`_not_a_secret`), nor a
  line of code between brackets (:func:`_inside_code`);
- the value of a secret's flag written apart from it (``--password hunter2``, ``--token
  abc123``), but a word (help's ``--token TOKEN``), another flag, a file or a spec;
- a ``Cookie:`` header line's cookie values and a ``Set-Cookie:`` line's cookie value (its
  attributes kept), and a ``.pgpass`` line's password (``host:port:db:user:password``, a
  port or ``*`` second, so a time or ``a:b:c:d:e`` words are none):
  :mod:`~taskloom.domain.redact_pairs`;
- a ``.netrc`` line's password (``machine host login bob password …``), and a connection
  string's (``host=db user=app password=…``, ``Server=…;User ID=…;Password=…;``) when another
  of its keys is near it on the line;
- in a ``curl`` command the password of ``-u``/``--user``/``-U user:password``, in a
  ``mysql`` one the ``-pPASSWORD`` (elsewhere ``-u 1000:1000`` and ``-p8080:80`` are no
  credentials);
- in JSON, the string values under a key whose name ends in a secret's name or its plural
  (``password``, ``api_key``, ``clientSecret``, ``refresh_tokens``…), lists of them included,
  but for the keys of a ``permissions`` object (GitHub's ``"secrets": "read"``), and a number
  under a password's or a secret's (:func:`holds_numeric_secret`);
- in JSON, the credential of an ``Authorization`` or ``Proxy-Authorization`` value, its
  scheme word kept (``"Bearer [redacted]"``): under such a key (any case), as the ``value``
  of a ``{"name": "Authorization", "value": …}`` object (HAR; a ``name`` that is a secret's
  key, as in a Kubernetes ``env`` entry, redacts the whole value) and as the second item of
  an ``["Authorization", …]`` pair.

JSON the guard keeps as text (a number beyond a double, a duplicate key), and each line of a
text that is one JSON document (JSON Lines), gets the same key-based redaction in place
(:func:`~taskloom.guard.redact_json.redact_json_output`): only the redacted tokens of the
text change, every other character stays as the tool wrote it. In a JSON value every key is
redacted as text, and two keys redacted alike stay apart (``[redacted]``, ``[redacted] 2``).

Code is left alone (``password = ask()``, ``token := getenv()``, ``password: string``, a
``token=token`` argument on its own line), and so are names that only contain such a word
(``secretName``, ``tokenUrl``, ``password_policy``, ``nextPageToken``), and so are a model's
tokens (``max_tokens``, ``special_tokens``). Replacements never contain a quote or a
backslash, and no match takes the quote that ends a JSON string, so JSON stays JSON. Every
pattern runs in time linear in the output, and a repeat of alternatives is possessive, so
matching a long line holds no backtracking state for each of its characters.
"""

from __future__ import annotations

import binascii
import functools
import re

from taskloom.domain.redact_pairs import REDACTED as REDACTED
from taskloom.domain.redact_pairs import keep_sub as _sub
from taskloom.domain.redact_pairs import redact_pairs
from taskloom.domain.redact_pairs import redacted_group as _redacted_group
from taskloom.domain.secrets import key_readings


def _token(lead: str, rest: str) -> re.Pattern[str]:
    """A credential that starts with the literal ``lead``, not inside a longer word. The
    literal comes first and the boundary's lookbehind after it, so the regex engine looks
    for ``lead`` at C speed instead of trying every position of a long line."""
    return re.compile(rf"{lead}(?<![\w-]{lead}){rest}(?![\w-])")


_PEM_BREAK = r"(?:\\++[nr]|[\r\n]|\\?+\"[ \t]*+,[ \t\r\n]*+\\?+\")++"
"""What parts a key's lines: a line break, as text or escaped once or more (JSON in a JSON
string: ``\\\\n``), or the end of one JSON string and the start of the next (the key as an
array of its lines, ``["-----BEGIN …", "MIIE…", …]``)."""
_PEM_LINE_END = r"(?=[\r\n]|\\++[nr]|\\?+\"[ \t\r\n]*+[,\]}]|$)"
"""A key's line ends at a line break or at its JSON string's end in an array or an object,
not at a key's (``"-----BEGIN …", "level": …`` is no key: redacted, the JSON broke)."""
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----"
    rf"(?:{_PEM_BREAK}(?:[A-Za-z-]++: [^\r\n\\\"]*+|[A-Za-z0-9+/=]++){_PEM_LINE_END})++"
    rf"(?:{_PEM_BREAK}-----END ([A-Z0-9]+ )*PRIVATE KEY-----)?"
)
"""A key block, header lines and base64 lines only (as text or as a JSON string's escapes):
a BEGIN marker in one log line and an END marker in a later one are not a key between."""
_SHAPES = (
    (("-----BEGIN",), _PEM),
    (("sk-",), _token("sk-", r"[A-Za-z0-9_-]{20,}")),
    (("gh", "github_pat_"), _token("g", r"(?:h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_\w{30,})")),
    (("npm_",), _token("npm_", r"[A-Za-z0-9]{36}")),
    (("AKIA", "ASIA"), _token("A", r"(?:KIA|SIA)[A-Z0-9]{16}")),
    (("xox",), _token("xox", r"[bpasr]-[A-Za-z0-9-]{10,}")),
    (("AIza",), _token("AIza", r"[0-9A-Za-z_-]{35}")),
    (("eyJ",), _token("eyJ", r"[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+")),
    (("sk_",), _token("sk_", r"(?:live|test)_[A-Za-z0-9]{16,}")),
    (("rk_",), _token("rk_", r"(?:live|test)_[A-Za-z0-9]{16,}")),
    (("whsec_",), _token("whsec_", r"[A-Za-z0-9+/=]{24,}")),
    (("glpat-", "glptt-", "gldt-"), _token("gl", r"(?:pat|ptt|dt)-[\w-]{20,}")),
    (("hf_",), _token("hf_", r"[A-Za-z0-9]{30,}")),
    (("SG.",), _token(r"SG\.", r"[\w-]{16,}\.[\w-]{30,}")),
    (("pypi-",), _token("pypi-", r"AgE[\w-]{40,}")),
    (("dop_v1_", "doo_v1_", "dor_v1_"), _token("do", r"[por]_v1_[a-f0-9]{64}")),
    (("ya29.",), _token(r"ya29\.", r"[\w-]{20,}")),
    (
        ("AccountKey=", "SharedAccessKey="),
        re.compile(
            r"[A-Za-z0-9+/](?:(?<=AccountKey=.)|(?<=SharedAccessKey=.))[A-Za-z0-9+/]{19,}={0,2}"
        ),
    ),
    (
        ("hooks.slack.com/",),
        re.compile(
            r"T(?<=hooks\.slack\.com/services/T)[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
        ),
    ),
)
"""Credential shapes, each searched only in text holding its marker: most output holds none."""
_AWS_FILE = re.compile(
    r"((?i:aws_(?:secret_access_key|session_token))[ \t]*[=:][ \t]*[\"']?)(?!\[redacted\])"
    r"[A-Za-z0-9/+=]{16,}"
)
"""A secret of an AWS credentials file (``aws_secret_access_key = …``, spaces around ``=``),
or of its name anywhere else as a setting."""
_BASE64_PEM = re.compile(r"LS0tLS1CRUdJTi(?<![A-Za-z0-9+/]LS0tLS1CRUdJTi)[A-Za-z0-9+/]*+={0,2}")
"""A PEM block in base64 (``LS0tLS1CRUdJTi`` is ``-----BEGIN``), as a kubeconfig's
``client-key-data`` or a Kubernetes secret's ``tls.key`` holds one: redacted when its first
line names a private key (a certificate stays)."""


def _base64_private_key(m: re.Match[str]) -> str | None:
    head = m.group(0)[:80]
    try:
        first = binascii.a2b_base64(head[: len(head) - len(head) % 4]).split(b"\n", 1)[0]
    except binascii.Error:
        return None
    return REDACTED if first.endswith(b"PRIVATE KEY-----") else None


_HEADER = re.compile(
    r"([AaPp](?<!\w[AaPp])(?:(?<=[Pp])(?i:roxy-a)|(?<=[Aa]))(?i:uthorization[\"']?[ \t]*[:=]"
    r"[ \t]*[\"']?(?>(?:(?:bearer|basic|token|digest|negotiate)[ \t]+)?)))"
    r"(?!(?i:\[redacted\]))[A-Za-z0-9._~+/=-]{6,}"
)
"""An ``Authorization`` header's credential. The scheme word, when there is one, is taken
whole (an atomic group): were it given back, ``Bearer [redacted]``, redacted once, would
have ``Bearer`` taken for the credential and become ``[redacted] [redacted]``. Its first
letter is a class, not a case-blind literal, so the engine looks for it fast."""
_SECRET_NAME = (
    r"(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|SECRET_?KEY|ACCESS_?KEY"
    r"|CREDENTIALS?|AUTH)"
)
_QUOTED = r"\"(?![ \t]*[,:\]}])[^\"\n]*\"|'[^'\n]*'"
"""A quoted value; a double quote followed by ``,``, ``:``, ``]`` or ``}`` closes a JSON string
(``{"cmd": "--token=", "n": 1}``): taken for a value, ``", "`` was replaced and the JSON broken."""
_ENV_LINE = re.compile(
    rf"(?m)^([ \t]*(?:export[ \t]+)?[A-Z0-9_]*{_SECRET_NAME}=)(?![\"']?\$)(?!\[redacted\])"
    rf"({_QUOTED}|[^\s\"']+)"
)
"""``NAME=value`` at the start of a line, no spaces around ``=`` (a shell's, an env file's,
``docker inspect``'s): code assigns with spaces. A ``$REFERENCE`` is not a secret."""
_FLAG = re.compile(
    r"(?i)(-(?<![\w-]-)-?[a-z-]*(?:password|passwd|secret|token|api-key|apikey)=)(?!\[redacted\])"
    rf"({_QUOTED}|(?:[^\s\"'\\]++|\\(?!\"))++)"
)
"""A flag's value; a backslash before a quote escapes it in a JSON string (``\"abc\"``), and
taken with the value it left the quote bare and the JSON broken."""
_NPMRC = re.compile(r"(:_(?:authToken|auth|password)=)(?!\[redacted\])([^\s\"'\\]+)")
"""An ``.npmrc`` registry credential (``//registry.npmjs.org/:_authToken=…``), which holds no
quote: one ends the JSON string it is in."""
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_LAST_WORDS = frozenset(
    {"password", "passwd", "passphrase", "secret", "token", "apikey", "jwt", "credential"}
)
_SECRET_LAST_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("secret", "key"), ("access", "key")}
)
_NOT_SECRET_TOKEN = frozenset({"page", "next", "prev", "continuation", "sync", "cursor", "csrf"})
"""``next_page_token`` is a place in a listing: redacted, a model could not ask for the next
page (a CSRF token is good for one form, and shows in every page's HTML)."""
_MODEL_TOKENS = frozenset(
    {"max", "min", "total", "prompt", "completion", "input", "output", "cache", "cached",
     "reasoning", "prediction", "audio", "text", "image", "num", "n", "new", "remaining",
     "context", "generated", "special", "added", "stop"}
)  # fmt: skip
"""Words before ``tokens`` that make it a model's tokens, not credentials: a count
(``max_tokens``, ``prompt_tokens``, ``cache_read_input_tokens``) or a tokenizer's vocabulary
(``special_tokens``, ``stop_tokens``), which redacted would be data lost."""


def is_secret_key(key: str) -> bool:
    """Whether a JSON key names a secret by its last word, singular or plural (``password``,
    ``clientSecrets``, ``api_key``, ``refresh_tokens``, ``privateKey``), not merely contains one
    (``secretName``, ``password_policy``, ``tokenUrl``). Stricter than the payload check
    (:func:`taskloom.domain.secrets.looks_secret`): there a false match costs a rename,
    here a value."""
    return any(_names_a_secret(list(words)) for words in key_readings(key))


def _names_a_secret(words: list[str]) -> bool:
    if not words:
        return False
    if words == ["auth"]:  # a registry login in Docker's config.json
        return True
    if words in (["cookie"], ["cookies"], ["set", "cookie"]):  # a session: not tough-cookie
        return True
    last = words[-1]
    one = last.removesuffix("s")  # a list of secrets is as secret as one
    if one == "token":
        return _is_credential_token(words[-3:-1], plural=last != one)
    if last in _SECRET_LAST_WORDS or one in _SECRET_LAST_WORDS:
        return True
    return len(words) > 1 and (words[-2], one) in _SECRET_LAST_PAIRS


def _is_credential_token(before: list[str], *, plural: bool) -> bool:
    """Whether ``token``/``tokens`` after the words ``before`` is a credential: not a place in
    a listing (``next_page_token``) nor, plural, a model's tokens (``max_tokens``)."""
    if not _NOT_SECRET_TOKEN.isdisjoint(before):
        return False
    return not plural or not before or before[-1] not in _MODEL_TOKENS


def is_permissions_key(key: str) -> bool:
    """Whether ``key`` holds a permissions object, whose keys name what may be reached and
    whose values are access levels: GitHub's ``{"secrets": "read", "id-token": "write"}``."""
    words = _KEY_WORDS.findall(key)
    return bool(words) and words[-1].lower() == "permissions"


_URL_USER = re.compile(r"://[^:/\s@\"'\\]*:(?!\[redacted\])")
"""The start of a ``scheme://user:password@host`` URL, the user empty too (``redis://:pw@``)."""
_URL_REST = re.compile(r"(?:[^\s\"'\\:]++|:(?!//))*+")
"""The rest of a URL: up to a space, a quote, a backslash or the next ``://``."""
_URL_CUT = re.compile(r"/@|[?#&][\w.%~+-]*=")
"""Where a URL's path or query has begun for sure: a ``/@scope`` or ``/users/@me`` segment, a
``?email=a@b`` parameter. No ``@`` past it is the host's."""
_URL_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?")


def _url_password_end(rest: str) -> int:
    """Where the password at the start of ``rest`` (what follows ``scheme://user:``) ends:
    at the last ``@`` before the host, since a password may hold ``@`` and ``/``
    (``p@ss/w0rd@host``); -1 if there is none."""
    cut = _URL_CUT.search(rest)
    limit = cut.start() if cut else len(rest)
    end = -1
    at = rest.find("@", 0, limit)
    while at > 0:
        host = _URL_HOST.match(rest, at + 1, limit)
        if host and rest[host.end() : host.end() + 1] in ("", "/", "?", "#"):
            name = host.group(1)
            if "." in name or host.group(2) or name.startswith("[") or name == "localhost":
                end = at  # a host beyond doubt: a later ``@`` is the path's (``repo.git@v1``)
                break
            end = at
        at = rest.find("@", at + 1, limit)
    span = rest[:end]
    if end > 0 and not ("/" in span and span.partition("/")[0].isdigit()):
        return end
    at = rest.find("@")  # a port and a path (``host:8080/a@b``) is no password: the old rule
    return at if at > 0 and "/" not in rest[:at] else -1


def _redact_url_passwords(text: str) -> tuple[str, int]:
    """``text`` with the password of every ``scheme://user:password@host`` URL redacted."""
    out: list[str] = []
    last = 0
    for m in _URL_USER.finditer(text):
        if m.start() < last:
            continue
        rest = _URL_REST.match(text, m.end())
        end = _url_password_end(rest.group(0)) if rest else -1
        if end > 0:
            out.append(text[last : m.end()] + REDACTED)
            last = m.end() + end
    return "".join([*out, text[last:]]), len(out)


_CONFIG_LINE = re.compile(
    r"(?m)^([+-]?[ \t]*(?:(?:export|-|[<>])[ \t]+)?)([A-Za-z_][\w.-]*)(=|:[ \t]+)"
    r"(\"[^\"\n\\]*\"|'[^'\n\\]*'|[^\s\"'`\\]+)(?=(?:[ \t]+#[^\n]*)?[ \t\r]*$)"
)
"""A line that is one setting: ``db_password=hunter2`` (an env file's, a properties file's),
``password: hunter2`` (YAML's), a trailing ``# comment`` allowed. Its value is one word or
one quoted string: prose goes on past it (``password: can't be blank``)."""
_SPACED_FLAG = re.compile(
    r"(-(?<![\w-]-)-?(?=[A-Za-z])[\w-]*(?i:pass(?:word|wd|phrase)|secret|token|key|jwt))"
    r"[ \t]+(\"[^\"\n\\]*\"|'[^'\n\\]*'|[^\s\"'`\\]+)"
)
"""A secret's flag and its value apart, as a command line echoed in a log writes it
(``--password hunter2``, ``--token abc123``). It starts with the ``-`` (its lookbehind after
it), which the regex engine then searches for fast."""
_COMMAND = re.compile(
    r"(?:c(?<![\w-]c)url|m(?<![\w-]m)(?:ysql\w*|ariadb[\w-]*))(?![\w-])(?:[^\n\\]++|\\\r?\n?)*+"
)
"""A ``curl`` or ``mysql`` command, its ``\\``-continued lines included: only there are
``-u user:password`` and ``-pPASSWORD`` credentials (``docker run -u 1000:1000 -p8080:80``
are a user id and a port)."""
_USER_OPTION = re.compile(
    r"(?<![\w-])(?:--(?:proxy-)?user(?:[ \t]+|=)|-[uU][ \t]*)(?:\"[^\"\s:\\]*:(?P<dq>[^\"\n\\]+)\""
    r"|'[^'\s:\\]*:(?P<sq>[^'\n\\]+)'|[^\s\"':\\]*:(?P<pw>[^\s\"'`\\]+))"
)
"""curl's ``-u user:password`` (``--user``, ``-U``/``--proxy-user``), quoted or not."""
_MYSQL_PASSWORD = re.compile(r"(?<![\w-])-p(?P<pw>\"[^\"\n\\]+\"|'[^'\n\\]+'|[^\s\"'`\\]+)")
"""MySQL's ``-pPASSWORD``, written against its flag (a bare ``-p`` asks for it)."""
_NOT_VALUES = frozenset(
    {"str", "string", "bytes", "int", "integer", "float", "number", "bool", "boolean", "any",
     "unknown", "object", "char", "text", "none", "null", "nil", "undefined", "true", "false",
     "yes", "no", "on", "off", "required", "optional", "invalid", "incorrect", "wrong",
     "expired", "revoked", "missing", "empty", "blank", "hidden", "masked", "redacted", "set",
     "unset", "inherit", "random", "generated", "prompt", "default", "ok", "read", "write",
     "files", "compat"}
)  # fmt: skip
"""Words a secret's line holds that are no secret: a type (``password: string``), a keyword
(``token=None``), a status (``token: expired``), an access level (a workflow's
``id-token: write``), GitHub's ``secrets: inherit``, nsswitch's ``passwd: files``."""
_TYPE_NAME = re.compile(r"[A-Z][A-Za-z]*[!?]?")
"""A capitalized word: a type (``token: Token``, GraphQL's ``String!``) or a label in a
translation file (``password: Password``), not a secret."""
_SWITCH_WORDS = frozenset({"no", "skip", "ask", "prompt", "with", "without", "use", "show"})
"""First words of a flag that is a switch, its next word no value (``--no-password db``)."""
_NUMERIC_SECRET_WORDS = frozenset({"password", "passwd", "passphrase", "secret"})


@functools.lru_cache(maxsize=4096)
def holds_numeric_secret(name: str) -> bool:
    """Whether a number under ``name`` is a secret: a password or a secret
    (``{"password": 123456}``), not a token's number, which is an id or a count
    (``{"token": 7}``, ``max_tokens``), nor a plural's (``"secrets": 3`` counts them)."""
    return any(words and words[-1] in _NUMERIC_SECRET_WORDS for words in key_readings(name))


@functools.lru_cache(maxsize=4096)
def _names_one_secret(name: str) -> bool:
    """Whether a line's or a flag's name names one secret: not a plural (``secrets: inherit``,
    ``--tokens 5``) nor a bare ``auth``, which in a config is a method (``auth: ldap``)."""
    lower = name.lower()
    return lower != "auth" and not lower.endswith("s") and is_secret_key(name)


_PATH = re.compile(r"(?:~|\.\.?)?/[\w.@/-]*")


def _not_a_secret(value: str, name: str, *, labels: bool) -> bool:
    """Whether a setting's value is no credential: a reference (``$DB_PASS``, ``${{ … }}``,
    ``%(pw)s``, ``self.token``, a path), a placeholder (``<token>``, ``****``), code's
    (``ask()``, ``pw,``), a type or a keyword, no letter under a token's name; with ``labels``
    (YAML, where the value is a word), a capitalized word (``Password``). A quoted value is
    judged by what it quotes, and one that quotes JSON's ``", "`` is no value at all."""
    if value[:1] in "\"'":
        value = value[1:-1]
        closes_json = value.lstrip()[:1] in (",", ":", "]", "}")
        if closes_json or (labels and any(c.isspace() for c in value)):
            return True
    if not value or value == REDACTED or value[0] in "$%{[(<`" or len(set(value)) == 1:
        return True
    if value[-1] in ",;({[)]}" or value.lower() in _NOT_VALUES or _PATH.fullmatch(value):
        return True
    if not any(c.isalpha() for c in value) and not holds_numeric_secret(name):
        return True  # a number, a version: ``token: 3.0-``
    parts = value.split(".")
    if len(parts) > 1 and all(part.isidentifier() for part in parts):
        return True  # an attribute, a module, a file name: ``self.token``, ``key.json``
    return labels and _TYPE_NAME.fullmatch(value) is not None


def _inside_code(m: re.Match[str]) -> bool:
    """Whether a ``name=value`` line sits in code: an argument or a member on its own line,
    after a line ending in ``(``, ``{``, ``[`` or ``,`` or before one starting with a closing
    bracket (``    token=token`` before ``)``)."""
    text = m.string
    before = text[max(0, m.start() - 300) : m.start()].rstrip()
    after = text[m.end() : m.end() + 300].partition("\n")[2].lstrip()
    return before.endswith(("(", "{", "[", ",")) or after.startswith((")", "}", "]"))


def _config_line(m: re.Match[str]) -> str | None:
    """A setting's value, but in YAML for a tag, an anchor, an alias or a block
    (``!vault |``, ``*default``): an env file's value may start with any character."""
    prefix, name, sep, value = m.groups()
    yaml = sep != "="
    if not _names_one_secret(name) or (yaml and value[0] in "!&*|>@"):
        return None
    if _not_a_secret(value, name, labels=yaml) or _inside_code(m):
        return None
    return prefix + name + sep + REDACTED


def _spaced_flag(m: re.Match[str]) -> str | None:
    """A secret flag's value, but for the next flag, a file (``@path``), a redirection or a
    pipe, a word (help's ``--token TOKEN``, prose's ``--token is``) and a spec (``docker build
    --secret id=npmrc,src=…``; a base64 value ends in ``==``)."""
    flag, value = m.groups()
    name = flag.lstrip("-")
    if not _names_one_secret(name) or _KEY_WORDS.findall(name)[0].lower() in _SWITCH_WORDS:
        return None
    word = value[1:-1] if value[:1] in "\"'" else value
    if word[:1] in ("-", "@", "|", ">", "&") or "=" in word.rstrip("="):
        return None
    if (word.isalpha() and len(word) < 16) or _not_a_secret(value, name, labels=False):
        return None
    return _redacted_group(m, 2)


def _command_credential(m: re.Match[str]) -> str | None:
    """The credential of a ``-u user:password`` or ``-pPASSWORD`` option, a
    ``$REFERENCE`` kept."""
    group = next(g for g in ("dq", "sq", "pw") if m.groupdict().get(g) is not None)
    value = m.group(group).strip("\"'")
    if not value or value[0] in "$`" or value == REDACTED:
        return None
    return _redacted_group(m, group)


def _redact_commands(text: str) -> tuple[str, int]:
    """Every ``curl`` or ``mysql`` command's credentials redacted, each one counted (a
    command may hold several: ``-u`` and ``--proxy-user``)."""
    count = 0

    def command(m: re.Match[str]) -> str | None:
        nonlocal count
        option = _USER_OPTION if m.group(0).startswith("curl") else _MYSQL_PASSWORD
        new, n = _sub(option, m.group(0), _command_credential)
        count += n
        return new if n else None

    text, _commands = _sub(_COMMAND, text, command)
    return text, count


def _may_name_a_secret(text: str) -> bool:
    """Whether ``text`` holds a word the line and flag rules need in a name: most output holds
    none. ``in`` on the lower-cased text finds it 5 times faster than a case-blind regex."""
    lower = text.lower()
    return (  # an ``or`` of ``in``: a generator would double the cost of a short string
        "pass" in lower
        or "secret" in lower
        or "token" in lower
        or "key" in lower
        or "jwt" in lower
        or "credential" in lower
    )


_NETRC = re.compile(
    r"(?im)^([ \t]*(?:(?:machine[ \t]+\S+|default)[ \t]+)?(?:login[ \t]+\S+[ \t]+)?"
    r"password[ \t]+)(\S+)(?=(?:[ \t]+(?:account|login|machine|macdef)[ \t][^\n]*)?[ \t\r]*$)"
)
"""A ``.netrc`` line's password: ``machine host login bob password hunter2``, or the
``password hunter2`` line of an entry written over several lines."""
_CONNECTION_PASSWORD = re.compile(
    r"(?i)(?<![\w.-])(pass(?:word)?|pwd)([ \t]*=[ \t]*)('[^'\n\\]*'|[^\s;'\"\\]+)"
)
"""A connection string's password: libpq's ``host=db user=app password=…`` and ODBC's or
ADO.NET's ``Server=…;User Id=…;Password=…;``."""
_CONNECTION_KEYS = (
    "host=", "hostaddr=", "server=", "data source=", "dbname=", "database=",
    "initial catalog=", "user=", "user id=", "uid=", "port=",
)  # fmt: skip
"""The other keys of a connection string, one of which a password's line holds."""


def _netrc_password(m: re.Match[str]) -> str | None:
    if _not_a_secret(m.group(2), "password", labels=False):
        return None
    return _redacted_group(m, 2)


def _connection_password(m: re.Match[str]) -> str | None:
    """The password of a ``key=value`` connection string: another of its keys (a host, a
    database, a user) near it on the same line, and a value that is no reference or code's."""
    value = m.group(3)
    if value.endswith((",", ")")) or _not_a_secret(value, "password", labels=False):
        return None
    text = m.string
    start = max(text.rfind("\n", max(0, m.start() - 300), m.start()) + 1, m.start() - 300)
    end = text.find("\n", m.end(), m.end() + 300)
    line = text[start : m.end() + 300 if end < 0 else end].lower()  # 300 characters each side
    if not any(key in line for key in _CONNECTION_KEYS):
        return None
    return _redacted_group(m, 3)


def _redact_lines(text: str) -> tuple[str, int]:
    """The rules that read a line or a command: settings, flags apart from their value,
    a ``.netrc``'s and a connection string's passwords, curl's and mysql's credentials."""
    count = 0
    if _may_name_a_secret(text):
        for pattern, rule in ((_CONFIG_LINE, _config_line), (_SPACED_FLAG, _spaced_flag)):
            text, n = _sub(pattern, text, rule)
            count += n
    lower = text.lower()
    if "pass" in lower or "pwd" in lower:
        for pattern, rule in (
            (_NETRC, _netrc_password),
            (_CONNECTION_PASSWORD, _connection_password),
        ):
            text, n = _sub(pattern, text, rule)
            count += n
    if "curl" in text or "mysql" in text or "mariadb" in text:
        text, n = _redact_commands(text)
        count += n
    text, n = redact_pairs(text)
    return text, count + n


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with credentials replaced by ``[redacted]``, and how many were."""
    count = 0
    for markers, pattern in _SHAPES:
        if any(marker in text for marker in markers):
            text, n = pattern.subn(REDACTED, text)
            count += n
    for hint, pattern in (("uthorization", _HEADER), ("UTHORIZATION", _HEADER)):
        if hint in text:
            text, n = pattern.subn(r"\1" + REDACTED, text)
            count += n
            break
    if "aws_" in text or "AWS_" in text:
        text, n = _AWS_FILE.subn(r"\1" + REDACTED, text)
        count += n
    if "LS0tLS1CRUdJTi" in text:
        text, n = _sub(_BASE64_PEM, text, _base64_private_key)
        count += n
    if "://" in text:
        text, n = _redact_url_passwords(text)
        count += n
    if "=" in text:
        for pattern in (_ENV_LINE, _FLAG, _NPMRC):
            text, n = pattern.subn(r"\1" + REDACTED, text)
            count += n
    text, n = _redact_lines(text)
    return text, count + n
