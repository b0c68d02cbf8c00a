"""Surfacing from a habit session: envelope checks, senses, the Arc outbox."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from typing import Any

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.habits.runner import run_habit
from tests.conftest import ouro_json

PY = shlex.quote(sys.executable)


def define(bundle: Bundle, name: str, run: str, **extra: Any) -> None:
    fields = {"title": f"{name} habit", "cadence": "30m", "run": run, **extra}
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / f"{name}.yaml").write_text(json.dumps(fields), encoding="utf-8")


def body(bundle: Bundle, calls: list[list[str]]) -> str:
    """A body that runs 'ouro surface ...' once per call, ignoring exit codes."""
    folder = bundle.habits / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "say.py").write_text(
        textwrap.dedent(
            f"""
            import json, subprocess, sys
            for args in {calls!r}:
                subprocess.run([sys.executable, "-m", "ouro.cli", "surface", *args])
            """
        )
    )
    return f"{PY} habits/bin/say.py"


def set_meta(bundle: Bundle, **keys: Any) -> None:
    meta = json.loads(bundle.meta_path.read_text())
    meta.update(keys)
    bundle.meta_path.write_text(json.dumps(meta))


def test_every_attempt_is_checked_delivered_or_queued_and_recorded(bundle: Bundle) -> None:
    sense = bundle.root / "sense.py"
    sense.write_text(
        "import json, sys\n"
        "open(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')\n"
        "if sys.argv[3] == 'fail': sys.exit('sense down')\n"
        "print('delivered')\n"
    )
    sent_log = bundle.root / "sent.jsonl"
    set_meta(
        bundle,
        senses={"imessage": f"{PY} {sense} {sent_log} {{recipient}} {{text}} {{reason}}"},
        redact={"literals": ["s3cret-value"]},
    )
    run = body(
        bundle,
        [
            ["--to", "originator", "--reason", "answer", "done: s3cret-value is set"],
            ["--to", "family", "--reason", "status", "nightly check ran"],
            ["--to", "bo", "--reason", "needed_input", "which inbox?"],
            ["--to", "mallory", "--reason", "other", "hello"],
            ["--to", "ari", "--reason", "blocked", "fail"],
        ],
    )
    define(
        bundle,
        "talk",
        run,
        origin={"friendId": "ari", "channel": "imessage", "key": "t1"},
        surface={"extra": ["bo"]},
    )
    receipt = run_habit(bundle, "talk", trigger="manual")
    got = [
        (a["recipient"], a["channel"], a["result"], a.get("routeKind"))
        for a in receipt["surfaceAttempts"]
    ]
    assert got == [
        ("ari", "imessage", "delivered", "originator"),
        ("family", "arc-outbox", "queued", "family"),
        ("bo", "arc-outbox", "queued", "extra"),
        ("mallory", "none", "blocked", None),
        ("ari", "imessage", "failed", "originator"),
    ]
    assert receipt["surfaceAttempts"][3]["error"] == (
        "'mallory' is not in this habit's return routes (allowed: family, ari, bo)"
    )
    assert receipt["surfaceAttempts"][4]["error"] == "sense command exited 1: sense down"
    assert receipt["outcome"] == "surfaced"
    # the sense got the redacted text as single arguments, without a shell
    assert [json.loads(line) for line in sent_log.read_text().splitlines()] == [
        ["ari", "done: [redacted:literal] is set", "answer"],
        ["ari", "fail", "blocked"],
    ]
    outbox = [
        json.loads(line)
        for line in (bundle.arc / "outbox" / "pending.jsonl").read_text().splitlines()
    ]
    assert [(o["recipient"], o["routeKind"], o["reason"], o["text"]) for o in outbox] == [
        ("family", "family", "status", "nightly check ran"),
        ("bo", "extra", "needed_input", "which inbox?"),
    ]
    assert {o["runId"] for o in outbox} == {receipt["runId"]}
    surface_refs = [r["locator"] for r in receipt["producedRefs"] if r["kind"] == "surface"]
    assert surface_refs[1:] == [f"arc/outbox/pending.jsonl#{o['id']}" for o in outbox]
    assert receipt["pendingLocator"] == "arc/outbox/pending.jsonl"


def test_only_refused_attempts_make_the_run_blocked(bundle: Bundle) -> None:
    run = body(bundle, [["--to", "originator", "--reason", "needed_input", "anyone?"]])
    define(bundle, "lonely", run, surface={"family": False})  # no origin.friendId
    receipt = run_habit(bundle, "lonely", trigger="manual")
    routes = receipt["permissionEnvelope"]["returnRoutes"]
    assert routes == [
        {
            "kind": "originator",
            "recipient": "originator",
            "status": "unresolved",
            "reason": "habits/lonely.yaml has no origin.friendId",
        }
    ]
    assert receipt["permissionEnvelope"]["canMessageOutward"] is False
    assert receipt["toolPolicy"]["outwardMessagingAllowed"] is False
    [attempt] = receipt["surfaceAttempts"]
    assert attempt["result"] == "unavailable"
    assert receipt["outcome"] == "blocked"
    assert not (bundle.arc / "outbox" / "pending.jsonl").exists()


def test_outside_a_habit_session_nothing_is_sent(bundle: Bundle) -> None:
    result = Library(bundle).surface("hi", to="family", reason="status")
    assert result["result"] == "blocked" and result["recorded"] is False
    assert "not inside a habit session" in result["error"]
    cli = ouro_json("surface", "--to", "family", "--reason", "status", "hi", bundle=bundle)
    assert cli["result"] == "blocked"
    assert not (bundle.arc / "outbox").exists()


def test_a_forged_session_id_cannot_escape_the_bundle(bundle: Bundle) -> None:
    env = {"OURO_SESSION_ID": "../../../tmp", "OURO_HABIT": "x"}
    result = ouro_json(
        "surface", "--to", "family", "--reason", "status", "hi", bundle=bundle, env=env
    )
    assert result["result"] == "blocked" and result["recorded"] is False


def test_a_habit_sends_typed_messages_to_a_peer_through_the_messages_machinery(
    bundle: Bundle, tmp_path: Any
) -> None:
    from ouro import messages

    peer = Bundle.init(tmp_path / "bo.ouro", agent="bo")
    messages.set_peer(bundle, "bo", str(peer.root))
    messages.set_peer(bundle, "cy", str(tmp_path / "nowhere"))  # unreachable: queued
    set_meta(bundle, redact={"literals": ["s3cret-value"]})
    run = body(
        bundle,
        [
            ["--to", "bo", "--reason", "needed_input", "which key? s3cret-value"],
            ["--to", "cy", "--reason", "blocked", "waiting on cy"],
        ],
    )
    routes = {"extra": [{"friendId": p, "channel": "message"} for p in ("bo", "cy")]}
    define(bundle, "ask", run, surface=routes)
    receipt = run_habit(bundle, "ask", trigger="manual")
    got = [(a["recipient"], a["channel"], a["result"]) for a in receipt["surfaceAttempts"]]
    assert got == [("bo", "message", "delivered"), ("cy", "message", "queued")]
    assert "nowhere" in receipt["surfaceAttempts"][1]["rawStatus"]
    assert receipt["outcome"] == "surfaced"

    inbox = messages.inbox(peer).messages
    assert [(m["from"], m["kind"], m["text"]) for m in inbox] == [
        ("habit:ask", "question", "which key? [redacted:literal]")
    ]
    queued = messages.outgoing(bundle)
    assert [(q["to"], q["kind"], q["from"]) for q in queued] == [("cy", "blocker", "habit:ask")]
    refs = [r["locator"] for r in receipt["producedRefs"] if r["kind"] == "surface"]
    assert refs[:2] == [
        f"arc/messages/sent.jsonl#{inbox[0]['id']}",
        f"arc/messages/sent.jsonl#{queued[0]['id']}",
    ]

    # the tool policy is respected: a habit not granted message_send cannot send one
    define(bundle, "quiet", run, tools=["surface"], surface=routes)
    refused = run_habit(bundle, "quiet", trigger="manual")
    assert [a["result"] for a in refused["surfaceAttempts"]] == ["blocked", "blocked"]
    assert refused["surfaceAttempts"][0]["error"] == "the habit's tool policy denies message_send"
    assert len(messages.inbox(peer).messages) == 1
