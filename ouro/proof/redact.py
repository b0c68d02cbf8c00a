"""Redaction: credentials never reach an Arc file, a packet, a hook or a page.

``redact(text, literals)`` replaces anything that looks like a credential with
``[redacted:<kind>]``. It is the one redactor: Arc applies it when it writes
(events, claims, obligations, receipts), every render surface applies it when
it renders (the orientation packet's Arc *and* Desk items, hook output, MCP
results, habit packets, drill output). Stdlib only and cheap: it runs in hooks.

Kinds, in the order they are applied:

- ``literal``: every string listed in ``bundle.json`` under
  ``"redact": {"literals": [...]}`` (longest first, exact match);
- ``private_key``: PEM private key blocks (an unterminated block is redacted to
  the end of the text, so a truncated paste cannot leak its tail);
- ``bearer_token``: the token after ``Bearer``;
- ``jwt``: a bare JSON Web Token (``eyJ….eyJ….sig``);
- ``url_password``: the password in ``scheme://user:password@host``;
- ``url_token``: the value of a credential-named URL query parameter
  (``?token=``, ``access_token``, ``api_key``, ``sig``, ``X-Amz-Signature``…);
- ``basic_auth``: HTTP Basic credentials (``Basic <base64 of user:pass>``,
  ``curl -u user:pass``);
- ``authorization``: any other ``Authorization:`` header value;
- provider keys: ``anthropic_key`` (sk-ant-…), ``openai_key`` (sk-…),
  ``github_token`` (ghp_/gho_/ghu_/ghs_/ghr_/github_pat_), ``gitlab_token``
  (glpat-…), ``slack_token`` (xox?-…), ``slack_webhook``, ``aws_access_key``
  (AKIA/ASIA…), ``aws_secret`` (the value of an ``aws_secret_access_key``-style
  assignment), ``google_api_key`` (AIza…), ``stripe_key`` (sk_/rk_/pk_ live or
  test, whsec_), ``npm_token``, ``pypi_token``, ``huggingface_token`` (hf_…),
  ``sendgrid_key`` (SG.…), ``digitalocean_token`` (dop_v1_…),
  ``shopify_token`` (shpat_…);
- ``secret_flag``: the value after a ``--password`` / ``--token`` / ``--secret``
  / ``--api-key`` style command-line flag;
- ``password`` / ``secret``: the value of an assignment whose name ends in a
  credential word (``password`` for the password family, ``secret`` otherwise)
  (password, passwd, passphrase, pwd, secret, token, credential(s), cookie,
  apikey, accesskey, …; ``api_key``, ``clientSecret``, ``DB_PASSWORD``) in
  ``=``, ``:``, ``=>`` and JSON/quoted forms; a quoted value is redacted whole
  (spaces included). A name ending in a bare ``key`` (``sort_key``) counts only
  when its value looks like a key (12+ characters mixing letters and digits).

Redaction is applied to values, never undone, and is idempotent: a marker never
matches a pattern again.

A value ends at whitespace, a quote or a shell metacharacter (``;`` ``&`` ``|``
``(`` ``)`` ``<`` ``>``), so redaction never eats a command's separators
wherever it is applied (a quoted value is replaced inside its quotes, which
stay). A private key block is the one exception: it spans lines by nature.
A shell reference (``$TOKEN``, ``${TOKEN}``, the ``$`` of ``$(…)``) is not a
value and is left as written. A check command is never redacted: one that this
module would change is refused (``ouro.proof.checkrun.check_command``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.models.meta import META_LIMIT
from ouro.store import jsonio
from ouro.store.bounded import read_bytes

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

MARKER_PREFIX = "[redacted:"

Accept = Callable[[re.Match[str]], bool]


def _not_marker(group: int) -> Accept:
    def accept(match: re.Match[str]) -> bool:
        return not match.group(group).startswith(MARKER_PREFIX)

    return accept


#: A shell reference, not a value: ``$TOKEN``, ``${TOKEN}``, ``${TOKEN:-x}``, or the
#: ``$`` of a ``$(…)`` substitution (a value stops at the ``(``). A lower-case
#: ``$name`` is not taken as one: ``password=$ecret1`` is more likely a password.
#: (Compiled on first use, through ``re``'s cache: a host hook redacts no such value.)
_REFERENCE = r"\$(?:[A-Z_][A-Z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*(?:[:?+=\-][^}]*)?\})?"


def is_reference(value: str) -> bool:
    """Is ``value`` a reference to an environment variable (or a substitution)?"""
    return re.fullmatch(_REFERENCE, value) is not None


def _not_reference(group: int) -> Accept:
    """Accept a match unless its value is already a marker or a shell reference."""

    def accept(match: re.Match[str]) -> bool:
        value = match.group(group)
        return not value.startswith(MARKER_PREFIX) and not is_reference(value)

    return accept


def _basic_ok(match: re.Match[str]) -> bool:
    """``Basic X`` counts when X decodes to ``user:password`` (prose says 'basic' too)."""
    import base64  # on use: a "Basic" header is rare, and base64 costs start-up
    import binascii

    value = match.group(1)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


class _Pattern(NamedTuple):
    kind: str
    #: the regex source, compiled on first use (``re`` keeps it compiled): most
    #: texts hold none of a pattern's ``needs``, so a process that redacts a few
    #: lines never pays to compile ~30 patterns
    regex: str
    #: group to replace (0 = the whole match)
    group: int
    #: extra acceptance test of a match
    accept: Accept | None
    #: the pattern is tried only when the text (after a leading space) holds one
    #: of these, compared without case: one scan instead of ~30
    needs: tuple[str, ...]


_PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "private_key",
        (
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
        0,
        None,
        ("-----BEGIN ",),
    ),
    _Pattern(
        "bearer_token",
        (r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)"),
        1,
        None,
        ("bearer",),
    ),
    _Pattern(
        "jwt",
        (r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),
        0,
        None,
        ("eyJ",),
    ),
    _Pattern(
        "url_password",
        (r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@;&|()<>]+:([^\s@/;&|()<>]+)@"),
        1,
        _not_reference(1),
        ("://",),
    ),
    _Pattern(
        "url_token",
        (
            r"(?i)[?&;](?:[\w.\-]*?(?:token|key|secret|sig|signature|password|passwd|pwd"
            r"|credential|auth|code|session))=([^&\s#\"'<>;|()]+)"
        ),
        1,
        _not_reference(1),
        ("?", "&", ";"),
    ),
    _Pattern(
        "basic_auth",
        (
            r"(?i:authorization[\"']?\s*[:=]\s*[\"']?)?(?i:basic)\s+"
            r"([A-Za-z0-9+/]{6,}={0,2})(?![\w+/=])"
        ),
        1,
        _basic_ok,
        ("basic",),
    ),
    _Pattern(
        "basic_auth",
        (r"(?:^|\s)(?:-u|--user)[ =]+[\"']?[^\s:\"';&|()<>]+:([^\s\"';&|()<>]+)"),
        1,
        _not_reference(1),
        ("-u", "--user"),
    ),
    _Pattern(
        "authorization",
        (
            r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
            r"(?>(?:(?:basic|bearer|token|digest|negotiate|ntlm)\s+)?)([^\s\"';&|()<>]+)"
        ),
        1,
        _not_reference(1),
        ("authorization",),
    ),
    _Pattern("anthropic_key", (r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), 0, None, ("sk-ant-",)),
    _Pattern(
        "openai_key",
        (r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        0,
        None,
        ("sk-",),
    ),
    _Pattern(
        "github_token",
        (r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        0,
        None,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Pattern(
        "gitlab_token",
        (r"\bgl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_\-]{20,}"),
        0,
        None,
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"),
    ),
    _Pattern("slack_token", (r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"), 0, None, ("xox",)),
    _Pattern(
        "slack_webhook",
        (r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+"),
        0,
        None,
        ("hooks.slack.com",),
    ),
    _Pattern("aws_access_key", (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0, None, ("AKIA", "ASIA")),
    _Pattern(
        "aws_secret",
        (r"(?i)aws[_\-.]?(?:secret|sk)[A-Za-z_\-.]*[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b"),
        1,
        None,
        ("aws",),
    ),
    _Pattern("google_api_key", (r"\bAIza[0-9A-Za-z_\-]{35}"), 0, None, ("AIza",)),
    _Pattern(
        "stripe_key",
        (r"\b(?:(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})"),
        0,
        None,
        ("_live_", "_test_", "whsec_"),
    ),
    _Pattern("npm_token", (r"\bnpm_[A-Za-z0-9]{36}\b"), 0, None, ("npm_",)),
    _Pattern("pypi_token", (r"\bpypi-AgE[A-Za-z0-9_\-]{40,}"), 0, None, ("pypi-",)),
    _Pattern("huggingface_token", (r"\bhf_[A-Za-z0-9]{30,}\b"), 0, None, ("hf_",)),
    _Pattern(
        "sendgrid_key",
        (r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
        0,
        None,
        ("SG.",),
    ),
    _Pattern("digitalocean_token", (r"\bdo[opr]_v1_[a-f0-9]{64}\b"), 0, None, ("_v1_",)),
    _Pattern("shopify_token", (r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"), 0, None, ("shp",)),
    _Pattern(
        "secret_flag",
        (
            r"(?i)(?:^|\s)--?(?:[\w\-]*[\-_])?(?:password|passwd|passphrase|token|secret"
            r"|api-?key|access-?key|secret-?key|client-?secret)(?:=|\s+)[\"']?"
            r"([^\s\"';&|()<>]+)"
        ),
        1,
        _not_reference(1),
        (" -", "\t-", "\n-"),
    ),
)

#: The assignment pass runs only when the text holds one of these (any case).
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "cookie", "session")
#: Every trigger, lowercased: a substring test each (fast C loops, no regex).
_NEEDLES: tuple[str, ...] = tuple(
    sorted({n.lower() for pat in _PATTERNS for n in pat.needs} | set(_CREDENTIAL_WORDS))
)
_NEEDS: tuple[frozenset[str], ...] = tuple(
    frozenset(n.lower() for n in pat.needs) for pat in _PATTERNS
)

#: ``name = value`` in the forms people paste: ``k=v``, ``k: v``, ``k => v``,
#: ``"k": "v"``, ``k='v w'``, ``\"k\": \"v\"`` (JSON inside a JSON string).
_ASSIGN = (
    r"""(?<![\w.\-])(?P<key>[A-Za-z_][\w.\-]{0,80})(?:\\?["'])?[ \t]*(?::=|=>|[:=])[ \t]*"""
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|\\"(?P<eq>.*?)\\"|(?P<v>[^\s"'<>;&|()]+))"""
)
_WORDS = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+"
#: Last words of a name that make its value a credential.
_STRONG = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "token",
        "credential",
        "credentials",
        "cookie",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "accountkey",
        "authtoken",
        "accesstoken",
        "refreshtoken",
        "clientsecret",
        "sessionid",
    }
)
#: Words before a final ``key`` that make it a credential name (``api_key``).
_KEY_OWNERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "account",
        "master",
        "auth",
        "signing",
        "encryption",
        "client",
        "deploy",
        "license",
        "ssh",
        "service",
        "shared",
        "storage",
        "subscription",
    }
)
_KEYISH = r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[^\s]{12,}"


_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pwd", "pass"})


def _kind_of(key: str) -> str:
    """``password`` for a password-family name, else ``secret`` (the marker's kind)."""
    words = re.findall(_WORDS, key)
    return "password" if words and words[-1].lower() in _PASSWORD_WORDS else "secret"


def _credential_name(key: str, value: str) -> bool:
    words = [w.lower() for w in re.findall(_WORDS, key)]
    if not words:
        return False
    last = words[-1]
    if last in _STRONG:
        return True
    if last == "pass":
        return len(words) > 1
    if last == "key":
        if len(words) > 1 and words[-2] in _KEY_OWNERS:
            return True
        return bool(re.fullmatch(_KEYISH, value))
    return False


def _assignment(match: re.Match[str]) -> str:
    for group in ("dq", "sq", "eq", "v"):
        value = match.group(group)
        if value is not None:
            break
    else:  # pragma: no cover - the pattern always sets one group
        return match.group(0)
    if (
        not value.strip()
        or value.startswith(MARKER_PREFIX)
        or is_reference(value)
        or (group == "v" and len(value) < 3)
        or not _credential_name(match.group("key"), value)
    ):
        return match.group(0)
    start, end = match.span(group)
    offset = match.start(0)
    whole = match.group(0)
    return whole[: start - offset] + _marker(_kind_of(match.group("key"))) + whole[end - offset :]


def _marker(kind: str) -> str:
    return f"{MARKER_PREFIX}{kind}]"


def _apply(
    pattern: re.Pattern[str], group: int, kind: str, accept: Accept | None, text: str
) -> str:
    marker = _marker(kind)
    if group == 0 and accept is None:
        return pattern.sub(marker, text)

    def swap(match: re.Match[str]) -> str:
        whole = match.group(0)
        if accept is not None and not accept(match):
            return whole
        if group == 0:
            return marker
        start, end = match.span(group)
        offset = match.start(0)
        return whole[: start - offset] + marker + whole[end - offset :]

    return pattern.sub(swap, text)


def redact(text: str, literals: Sequence[str] = ()) -> str:
    """``text`` with every credential-looking value replaced by a marker."""
    if not text:
        return text
    for literal in _ordered(literals):
        if literal in text:
            text = text.replace(literal, _marker("literal"))
    hay = " " + text.lower()
    # a substring test per needle: about twice as fast as one search for an
    # alternation of them, short text or long, and nothing to compile at start-up
    found = {need for need in _NEEDLES if need in hay}
    if not found:
        return text
    for pat, needs in zip(_PATTERNS, _NEEDS, strict=True):
        if not found.isdisjoint(needs):
            text = _apply(re.compile(pat.regex), pat.group, pat.kind, pat.accept, text)
    if (":" in text or "=" in text) and any(w in found for w in _CREDENTIAL_WORDS):
        text = re.sub(_ASSIGN, _assignment, text)
    return text


def _ordered(literals: Sequence[str]) -> Sequence[str]:
    """The literals to replace, longest first (each once)."""
    if isinstance(literals, _Ordered):
        return literals
    return sorted({lit for lit in literals if lit}, key=len, reverse=True)


class _Ordered(tuple[str, ...]):
    """Literals already put in ``_ordered``'s order (``redact_obj`` does it once)."""


def redact_obj(obj: Any, literals: Sequence[str] = ()) -> Any:
    """Redact every string (keys included) inside a JSON-like value.

    A string value under a credential-named key (``{"password": "x y"}``) is
    replaced whole, as its ``password: "x y"`` text form would be.
    """
    if not isinstance(literals, _Ordered):
        literals = _Ordered(_ordered(literals))
    if isinstance(obj, str):
        return redact(obj, literals)
    if isinstance(obj, dict):
        return {redact_obj(k, literals): _value(k, v, literals) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_obj(v, literals) for v in obj]
    return obj


def _value(key: Any, value: Any, literals: Sequence[str]) -> Any:
    if (
        isinstance(key, str)
        and isinstance(value, str)
        and value.strip()
        and not value.startswith(MARKER_PREFIX)
        and not is_reference(value)
        and _credential_name(key, value)
    ):
        return _marker(_kind_of(key))
    return redact_obj(value, literals)


def bundle_literals(bundle: Bundle) -> list[str]:
    """The literals listed in ``bundle.json`` → ``redact.literals`` (missing = none).

    A malformed ``bundle.json`` is not this module's to report: it yields no
    literals and the pattern redaction still applies.
    """
    try:
        data = jsonio.loads(read_bytes(bundle.meta_path, limit=META_LIMIT, what="bundle.json"))
    except (OuroError, jsonio.JSONDecodeError):
        return []
    section = data.get("redact") if isinstance(data, dict) else None
    raw = section.get("literals") if isinstance(section, dict) else None
    if not isinstance(raw, list):
        return []
    return [item for item in raw if isinstance(item, str) and item]
