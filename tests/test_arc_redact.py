"""Secrets never reach a file under arc/ nor the orientation packet."""

from __future__ import annotations

import json
import os

import pytest

from ouro.arc import claims, obligations
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.orient import build_packet
from ouro.proof.redact import bundle_literals, redact, redact_obj
from tests.conftest import run_ouro

SECRETS = {
    "anthropic_key": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx",
    "openai_key": "sk-proj-ZyXwVuTsRqPoNmLkJiHgFeDc1234",
    "github_token": "ghp_" + "Q" * 36,
    "slack_token": "xoxb-123456789012-abcdefghij",
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "google_api_key": "AIza" + "S" * 35,
    "stripe_key": "sk_live_" + "4" * 24,
}
BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.sig"
URL_PASSWORD = "hunter2hunter2"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM_BODY = "MIIEowIBAAKCAQEAsecretpemmaterial"
LITERAL = "correct-horse-battery-staple"

SEED = (
    " ".join(SECRETS.values())
    + f" Authorization: Bearer {BEARER} https://bob:{URL_PASSWORD}@db.example.com/x"
    + f" aws_secret_access_key={AWS_SECRET} {LITERAL}"
    + f" -----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
)
NEEDLES = [*SECRETS.values(), BEARER, URL_PASSWORD, AWS_SECRET, PEM_BODY, LITERAL]


@pytest.fixture
def secret_bundle(bundle: Bundle) -> Bundle:
    meta = json.loads(bundle.meta_path.read_text())
    meta["redact"] = {"literals": [LITERAL]}
    bundle.meta_path.write_text(json.dumps(meta))
    return bundle


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_provider_pattern(kind: str) -> None:
    assert redact(f"x {SECRETS[kind]} y") == f"x [redacted:{kind}] y"


def test_other_kinds_and_literals() -> None:
    out = redact(SEED, [LITERAL])
    for needle in NEEDLES:
        assert needle not in out
    for kind in ("bearer_token", "url_password", "aws_secret", "private_key", "literal"):
        assert f"[redacted:{kind}]" in out
    assert redact(out, [LITERAL]) == out  # idempotent
    assert redact_obj({SEED: [SEED, 3]}, [LITERAL]) == {out: [out, 3]}
    assert redact("-----BEGIN PRIVATE KEY-----\ntruncated tail") == "[redacted:private_key]"
    assert redact("plain text stays, sk-short too") == "plain text stays, sk-short too"


def _arc_bytes(bundle: Bundle) -> bytes:
    out = b""
    for dirpath, _dirs, files in os.walk(bundle.root / "arc"):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as handle:
                out += handle.read()
    return out


def test_seeded_secrets_through_every_write_path(secret_bundle: Bundle) -> None:
    b = secret_bundle
    assert bundle_literals(b) == [LITERAL]
    record_event(
        b,
        "tool_completed",
        SEED,
        session_ref=SEED,
        turn_id=SEED,
        current_ask=SEED,
        next_safe_action=SEED,
        stop_before=[SEED],
        blocked_because=SEED,
        produced_refs=[{"kind": SEED, "locator": SEED}],
        meta={SEED: SEED, "nested": [SEED]},
    )
    for verb in ("ask", "next", "blocker", "handoff", "note"):
        extra = ["--stop-before", SEED] if verb == "next" else []
        run_ouro("arc", verb, SEED, *extra, "--session", SEED, bundle=b, check=True)
    # a check holding a secret is refused (never stored rewritten): CLI and library
    refused = run_ouro("claim", "add", SEED, "--check", f"echo {SEED}", bundle=b)
    assert refused.returncode == 2 and "looks like a credential" in refused.stderr
    with pytest.raises(InvalidInput, match="looks like a credential"):
        claims.add_claim(b, SEED, check=f"echo {SEED}", authority="human")
    c = claims.add_claim(b, SEED, check="echo checked", authority="human")
    claims.add_evidence(b, c["id"], command=SEED, exit_code=0, output=SEED, authority="test")
    claims.verify_claim(b, c["id"])
    other = claims.add_claim(b, SEED)
    claims.supersede_claim(b, other["id"], c["id"])
    ob = obligations.add_obligation(b, SEED, owed_to=SEED, route=f"slack:{SEED}")
    obligations.close_obligation(b, ob["id"])
    run_ouro("obligation", "add", SEED, "--to", SEED, "--route", f"x:{SEED}", bundle=b, check=True)
    run_ouro("arc", "checkpoint", bundle=b, check=True)
    arc = _arc_bytes(b)
    assert b"[redacted:" in arc
    packet = build_packet(b, budget=20000).text
    cli_packet = run_ouro("orient", "--budget", "20000", bundle=b, check=True).stdout
    for needle in NEEDLES:
        assert needle.encode() not in arc, needle
        assert needle not in packet, needle
        assert needle not in cli_packet, needle


# --- the widened pattern set (issue 11) ---------------------------------------

from tests.secret_shapes import SHAPES  # noqa: E402


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_every_seeded_shape_is_redacted(kind: str) -> None:
    typed, needle = SHAPES[kind]
    out = redact(f"before {typed} after")
    assert needle not in out
    assert "[redacted:" in out
    assert out.startswith("before ") and out.endswith(" after")
    assert redact(out) == out  # idempotent


def test_at_least_twenty_shapes() -> None:
    assert len(SHAPES) >= 20


@pytest.mark.parametrize(
    "text",
    [
        "sort_key: created",
        "monkey: banana",
        "token budget: 2500",
        "basic functionality here",
        "next: rotate the key: done",
        "see desk/dev/t-01/task.md and arc/obligations/ob-x.json",
        "https://example.com/docs?page=2&q=tokens",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_values_under_credential_keys_in_objects() -> None:
    out = redact_obj({"password": "two words", "route": {"key": "thread-9"}, "n": 3})
    assert out == {"password": "[redacted:password]", "route": {"key": "thread-9"}, "n": 3}
