"""Drill ``secrets``: credentials written through every path stay out.

Seeds fake credentials of each kind the redactor knows (plus a literal listed
in the copy's ``bundle.json``) through every Arc write path (ask, next safe
action with stop-before, blocker, handoff, note, claim text and about,
evidence command and output, obligation text, recipient and route) and
through a sentinel refresh with a caller signal. Then no file under ``arc/``
(events, checkpoint, claims, obligations, receipts, ledger) and not the
orientation packet may contain any of them, and the redaction markers must be
there (proof the secrets did reach the write paths).
"""

from __future__ import annotations

import os

import orjson

from ouro.bundle import Bundle
from ouro.models.ids import new_id
from ouro.sentinel.drills.harness import Probe

# Built from parts so this source file itself holds no credential-shaped string.
_TAIL = "Q7xZ2mK9pL4vR8sT1wY6nB3c"


def seeds(literal: str) -> dict[str, str]:
    return {
        "anthropic_key": "sk-" + "ant-api03-" + _TAIL + _TAIL,
        "openai_key": "sk-" + "proj-" + _TAIL + "AbCd",
        "github_token": "gh" + "p_" + _TAIL + "0123456789ab",
        "aws_access_key": "AK" + "IA" + "QWERTYUIOPASDFGH",
        "bearer_token": "Bearer " + "eyJhbGciOi" + _TAIL,
        "private_key": "-----BEGIN "
        + "PRIVATE KEY-----\nMIIEv"
        + _TAIL
        + "\n-----END "
        + "PRIVATE KEY-----",
        "url_password": "https://drill:" + "hunter2" + _TAIL[:6] + "@db.example.com/x",
        "password": "password=" + "Zebra" + _TAIL[:10],
        "literal": literal,
    }


def _needles(seeded: dict[str, str]) -> dict[str, str]:
    """The part of each seed that must never persist (for URLs: the password)."""
    out = dict(seeded)
    out["url_password"] = "hunter2" + _TAIL[:6]
    out["password"] = "Zebra" + _TAIL[:10]
    out["bearer_token"] = "eyJhbGciOi" + _TAIL
    out["private_key"] = "MIIEv" + _TAIL
    return out


def _add_literal(bundle: Bundle, literal: str) -> None:
    meta = orjson.loads(bundle.meta_path.read_bytes())
    section = meta.setdefault("redact", {})
    section["literals"] = [*section.get("literals", []), literal]
    bundle.meta_path.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))


def _write_everything(bundle: Bundle, blob: str) -> None:
    from ouro.arc import claims, obligations, recorder
    from ouro.sentinel.receipts import refresh
    from ouro.sentinel.signals import parse_caller_signal

    recorder.record_event(bundle, "turn_accepted", f"ask {blob}", current_ask=f"ask {blob}")
    recorder.record_event(
        bundle,
        "agent_note",
        f"next {blob}",
        next_safe_action=f"next {blob}",
        stop_before=[f"stop {blob}"],
        meta={"note": blob, blob: "key"},
        produced_refs=[{"kind": "note", "locator": "desk/_meta/featured.md"}],
    )
    recorder.record_event(bundle, "blocker_detected", f"blocked {blob}", blocked_because=blob)
    recorder.record_event(bundle, "handoff", f"handoff {blob}", session_ref=f"s {blob}")
    recorder.record_event(bundle, "agent_note", f"note {blob}", turn_id=f"t {blob}")
    claim = claims.add_claim(
        bundle,
        f"claim {blob}",
        about=["desk/_meta/featured.md"],
        authority="test",
        check=f"check {blob}",
    )
    claims.add_evidence(
        bundle,
        claim["id"],
        command=f"run {blob}",
        exit_code=0,
        output=f"output {blob}",
        note=f"note {blob}",
    )
    obligations.add_obligation(
        bundle, f"owe {blob}", owed_to=f"friend {blob}", route=f"email:{blob.splitlines()[0]}"
    )
    signal = parse_caller_signal(
        {
            "kind": "provider_lane",
            "source": "drill",
            "status": "down",
            "detail": blob,
            "repairCommand": f"export KEY={blob}",
        },
        index=0,
    )
    refresh(bundle, trigger="drill", signals=[signal])


def run(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient

    literal = "drill-literal-" + new_id("x")
    _add_literal(bundle, literal)
    seeded = seeds(literal)
    _write_everything(bundle, " | ".join(seeded.values()))
    needles = _needles(seeded)
    leaks: dict[str, list[str]] = {}
    markers = 0
    for dirpath, _dirs, names in os.walk(bundle.arc):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as handle:
                data = handle.read().decode("utf-8", "replace")
            markers += data.count("[redacted:")
            rel = os.path.relpath(path, bundle.root)
            for kind, needle in needles.items():
                if needle in data:
                    leaks.setdefault(kind, []).append(rel)
    packet = orient.build_packet(bundle, budget=20_000).text
    for kind, needle in needles.items():
        files = leaks.get(kind, [])
        probe.expect(
            not files,
            f"no {kind} in any file under arc/",
            ", ".join(sorted(files)[:4]),
            look_at=(sorted(files) or ["arc/"])[0],
        )
        probe.expect(
            needle not in packet, f"no {kind} in the orientation packet", look_at="ouro orient"
        )
    probe.expect(
        markers > 0,
        "redaction markers show the secrets reached the write paths",
        f"{markers} marker(s)",
        look_at="arc/",
    )
