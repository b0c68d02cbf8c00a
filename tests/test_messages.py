"""Messages between bundles: two bundles on one machine, through the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession

from ouro import messages
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.orient import build_packet
from tests.conftest import ouro_json, record_snapshot, run_ouro
from tests.mcp_client import json_of, session


def _pair(tmp_path: Path) -> tuple[Bundle, Bundle]:
    a = Bundle.init(tmp_path / "a.ouro", agent="ari")
    b = Bundle.init(tmp_path / "b.ouro", agent="bo")
    return a, b


def test_question_and_answer_through_the_cli(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    run_ouro("desk", "track", "add", "parser", bundle=a, check=True)
    task = ouro_json("desk", "task", "add", "parser", "freeze the API", bundle=a)["task"]["id"]
    # b is not configured yet: the question is queued with the reason, not lost
    sent = ouro_json(
        "message",
        "send",
        "bo",
        "Is the parser API frozen? key sk-live-abcdefghijklmnopqrstuvwx",
        "--kind",
        "question",
        "--task",
        "parser/freeze-the-api",
        bundle=a,
    )
    assert sent["message"]["task"] == task  # the reference is kept as the task's id
    assert not sent["delivered"] and "no bundle configured for bo" in sent["queuedReason"]
    listed = ouro_json("message", "list", bundle=a)
    assert listed["queued"][0]["id"] == sent["message"]["id"]
    assert "no bundle configured" in listed["queued"][0]["queuedReason"]
    run_ouro("message", "peer", "bo", str(b.root), bundle=a, check=True)
    retried = ouro_json("message", "retry", bundle=a)["retried"]
    assert [r["delivered"] for r in retried] == [True]
    assert ouro_json("message", "list", bundle=a)["queued"] == []
    # the recipient's packet shows it, redacted; reading the packet writes nothing
    before = record_snapshot(b.root)
    packet = build_packet(b).text
    assert record_snapshot(b.root) == before
    assert "Messages: unread" in packet and "1 unread from ari (1 question)" in packet
    assert "`ouro message read`" in packet and "parser API" not in packet  # counts, no body
    assert "sk-live-abcdefghij" not in (b.root / messages.INBOX).read_text()
    question = ouro_json("message", "list", "--unread", bundle=b)["messages"][0]
    reply = ouro_json("message", "reply", question["id"], "Yes, until Friday", bundle=b)
    assert reply["delivered"] and reply["message"]["replyTo"] == question["id"]
    assert reply["message"]["task"] == task  # the sender's task: not looked for in b
    assert ouro_json("message", "list", "--unread", bundle=b)["messages"] == []
    assert "Messages: unread" not in build_packet(b).text
    answer = ouro_json("message", "read", bundle=a)["messages"]
    assert [(m["kind"], m["from"], m["text"]) for m in answer] == [
        ("answer", "bo", "Yes, until Friday")
    ]
    assert ouro_json("message", "read", bundle=a)["messages"] == []  # now read


def test_limits_and_kinds(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="over the 4000 limit"):
        messages.send(bundle, "bo", "x" * 4001, kind="status", sender="ari")
    assert (
        run_ouro("message", "send", "bo", "hi", "--kind", "gossip", bundle=bundle).returncode == 2
    )
    assert not (bundle.root / messages.SENT).exists()  # nothing partial written


def test_a_message_about_a_task_that_does_not_exist_is_refused(bundle: Bundle) -> None:
    before = record_snapshot(bundle.root)
    for ref in ("t-nope", "ops/nope"):
        for args in (["message", "send", "bo", "hi"], ["desk", "friction", "add", "x"]):
            proc = run_ouro(*args, "--task", ref, bundle=bundle)
            assert proc.returncode in (1, 2), (args, proc.stderr)
            assert proc.stderr.startswith("error: task: "), (args, proc.stderr)
            assert repr(ref) in proc.stderr or "ops" in proc.stderr
    out = json.loads(
        run_ouro("message", "send", "bo", "hi", "--task", "t-nope", "--json", bundle=bundle).stdout
    )
    assert out["error"]["type"] == "not_found" and out["error"]["message"].startswith(
        "task: no task 't-nope'"
    )
    assert record_snapshot(bundle.root) == before  # nothing recorded, nothing queued
    assert not (bundle.root / messages.SENT).exists()


def test_unreachable_peer_keeps_the_message_queued(tmp_path: Path) -> None:
    a, _b = _pair(tmp_path)
    messages.set_peer(a, "cy", str(tmp_path / "gone.ouro"))
    out = messages.send(a, "cy", "handing over", kind="handoff", sender="ari")
    assert not out["delivered"] and "not a reachable bundle" in out["queuedReason"]
    Bundle.init(tmp_path / "gone.ouro", agent="cy")
    again = messages.send(a, "cy", "second", kind="status", sender="ari")
    assert again["delivered"] and [r["delivered"] for r in again["retried"]] == [True]
    texts = [m["text"] for m in messages.inbox(Bundle(tmp_path / "gone.ouro")).messages]
    assert texts == ["handing over", "second"]


def test_question_and_answer_through_mcp(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    messages.set_peer(a, "bo", str(b.root))
    messages.set_peer(b, "ari", str(a.root))
    got: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60), (tmp_path / "mcp.log").open("a") as log:
            async with session(a.root, errlog=log) as ca, session(b.root, errlog=log) as cb:
                await _exchange(ca, cb)

    async def _exchange(ca: ClientSession, cb: ClientSession) -> None:
        got["sent"] = json_of(
            await ca.call_tool(
                "message_send", {"agent": "bo", "text": "Can I take src/lex?", "kind": "question"}
            )
        )
        got["orient"] = json_of(await cb.call_tool("orient", {}))
        inbox = json_of(await cb.call_tool("message_read", {}))["messages"]
        got["reply"] = json_of(
            await cb.call_tool("message_reply", {"message_id": inbox[0]["id"], "text": "Go ahead"})
        )
        got["answer"] = json_of(await ca.call_tool("message_list", {"unread": True}))

    anyio.run(main)
    assert got["sent"]["delivered"]
    assert "1 unread from ari (1 question)" in got["orient"]["text"]
    assert "Can I take src/lex?" not in json.dumps(got["orient"])  # the body: message read only
    assert got["reply"]["delivered"]
    (answer,) = got["answer"]["messages"]
    assert answer["kind"] == "answer" and answer["text"] == "Go ahead"
    assert answer["replyTo"] == got["sent"]["message"]["id"]
    assert json.loads((a.root / "arc/peers.json").read_text())["peers"]["bo"]["bundle"]


def test_bad_inbox_line_is_reported_and_kept_and_bad_peers_file_queues(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    messages.set_peer(a, "bo", str(b.root))
    messages.send(a, "bo", "first", kind="status", sender="ari")
    inbox = b.root / messages.INBOX
    inbox.write_text(inbox.read_text() + "{torn line\n")
    listed = ouro_json("message", "list", bundle=b)
    assert [m["text"] for m in listed["messages"]] == ["first"]
    assert "inbox.jsonl:2" in listed["problems"][0]
    messages.send(a, "bo", "second", kind="status", sender="ari")
    assert "{torn line" in inbox.read_text()  # preserved; later lines still land
    assert [m["text"] for m in messages.inbox(b).messages] == ["first", "second"]
    (a.root / messages.PEERS).write_text("not json")
    out = messages.send(a, "bo", "third", kind="status", sender="ari")
    assert not out["delivered"] and "peers.json: unreadable" in out["queuedReason"]
