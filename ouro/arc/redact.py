"""Redaction: credentials never reach an Arc file or the orientation packet.

``redact(text, literals)`` replaces anything that looks like a credential with
``[redacted:<kind>]``. Kinds, in the order they are applied:

- ``literal``: every string listed in ``bundle.json`` under
  ``"redact": {"literals": [...]}`` (longest first, exact match);
- ``private_key``: PEM private key blocks (an unterminated block is redacted to
  the end of the text, so a truncated paste cannot leak its tail);
- ``url_password``: the password in ``scheme://user:password@host``;
- ``bearer_token``: the token after ``Bearer``;
- provider keys: ``anthropic_key`` (sk-ant-…), ``openai_key`` (sk-…),
  ``github_token`` (ghp_/gho_/ghu_/ghs_/ghr_/github_pat_), ``slack_token``
  (xox?-…), ``aws_access_key`` (AKIA/ASIA…), ``aws_secret`` (the value of an
  ``aws_secret_access_key``-style assignment), ``google_api_key`` (AIza…),
  ``stripe_key`` (sk_live_/rk_live_/…_test_);
- ``password``: the value of a ``password=…`` / ``password: …`` assignment.

Redaction is applied to values, never undone, and is idempotent: a marker never
matches a pattern again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson

from ouro.bundle import Bundle

_PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    # (kind, pattern, group to replace; 0 = whole match)
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
        0,
    ),
    ("url_password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@"), 1),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)"), 1),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), 0),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        0,
    ),
    ("slack_token", re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"), 0),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    (
        "aws_secret",
        re.compile(
            r"(?i)aws[_\-.]?(?:secret|sk)[A-Za-z_\-.]*[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b"
        ),
        1,
    ),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"), 0),
    ("password", re.compile(r"(?i)\b(?:password|passwd|pwd)\s*[:=]\s*[\"']?([^\s\"']{3,})"), 1),
)


def _marker(kind: str) -> str:
    return f"[redacted:{kind}]"


def _apply(pattern: re.Pattern[str], group: int, kind: str, text: str) -> str:
    marker = _marker(kind)
    if group == 0:
        return pattern.sub(marker, text)

    def swap(match: re.Match[str]) -> str:
        whole = match.group(0)
        start, end = match.span(group)
        offset = match.start(0)
        return whole[: start - offset] + marker + whole[end - offset :]

    return pattern.sub(swap, text)


def redact(text: str, literals: Sequence[str] = ()) -> str:
    """``text`` with every credential-looking value replaced by a marker."""
    if not text:
        return text
    for literal in sorted({lit for lit in literals if lit}, key=len, reverse=True):
        text = text.replace(literal, _marker("literal"))
    for kind, pattern, group in _PATTERNS:
        text = _apply(pattern, group, kind, text)
    return text


def redact_obj(obj: Any, literals: Sequence[str] = ()) -> Any:
    """Redact every string (keys included) inside a JSON-like value."""
    if isinstance(obj, str):
        return redact(obj, literals)
    if isinstance(obj, dict):
        return {redact_obj(k, literals): redact_obj(v, literals) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_obj(v, literals) for v in obj]
    return obj


def bundle_literals(bundle: Bundle) -> list[str]:
    """The literals listed in ``bundle.json`` → ``redact.literals`` (missing = none).

    A malformed ``bundle.json`` is not this module's to report: it yields no
    literals and the pattern redaction still applies.
    """
    try:
        data = orjson.loads(bundle.meta_path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    section = data.get("redact") if isinstance(data, dict) else None
    raw = section.get("literals") if isinstance(section, dict) else None
    if not isinstance(raw, list):
        return []
    return [item for item in raw if isinstance(item, str) and item]
