"""Message tools: the registry's input models and functions (interface edge)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro import messages
from ouro.bundle import Bundle
from ouro.desk.tasks import acting_agent
from ouro.models.base import ToolInput

Kind = Literal["question", "answer", "status", "handoff", "blocker"]


class MessageSendInput(ToolInput):
    agent: str = Field(description="the recipient agent (a peer: ouro message peer)")
    text: str = Field(description=f"the message (redacted; at most {messages.MAX_TEXT} chars)")
    kind: Kind = Field("status", description="question, answer, status, handoff or blocker")
    task: str | None = Field(None, description="the task it is about (id)")
    sender: str | None = Field(None, description="who sends it (default: the bundle's agent)")


def message_send(bundle: Bundle, inp: MessageSendInput) -> dict[str, Any]:
    who = acting_agent(bundle, inp.sender)
    return messages.send(bundle, inp.agent, inp.text, kind=inp.kind, sender=who, task=inp.task)


class MessageReplyInput(ToolInput):
    message_id: str = Field(description="the id (m-…) of the message in your inbox")
    text: str = Field(description="the reply (redacted; size-limited)")
    kind: Kind = Field("answer", description="question, answer, status, handoff or blocker")
    sender: str | None = Field(None, description="who replies (default: the bundle's agent)")


def message_reply(bundle: Bundle, inp: MessageReplyInput) -> dict[str, Any]:
    who = acting_agent(bundle, inp.sender)
    original = messages.find(bundle, inp.message_id)
    result = messages.send(
        bundle,
        str(original.get("from")),
        inp.text,
        kind=inp.kind,
        sender=who,
        task=original.get("task"),
        reply_to=inp.message_id,
        to_bundle=original.get("fromBundle"),
    )
    if not original.get("read"):
        messages.mark_read(bundle, [inp.message_id])
    return result


class MessageReadInput(ToolInput):
    message_id: str | None = Field(None, description="one message (default: every unread one)")


def message_read(bundle: Bundle, inp: MessageReadInput) -> dict[str, Any]:
    if inp.message_id:
        shown = [messages.find(bundle, inp.message_id)]
        problems: list[str] = []
    else:
        box = messages.inbox(bundle)
        shown, problems = [m for m in box.messages if not m["read"]], box.problems
    messages.mark_read(bundle, [m["id"] for m in shown if not m["read"]])
    return {"messages": shown, "problems": problems}


class MessageListInput(ToolInput):
    unread: bool = Field(False, description="only unread messages")
    limit: int | None = Field(None, ge=1, description="at most this many (newest)")


def message_list(bundle: Bundle, inp: MessageListInput) -> dict[str, Any]:
    box = messages.inbox(bundle)
    shown = [m for m in box.messages if not (inp.unread and m["read"])]
    if inp.limit is not None:
        shown = shown[-inp.limit :]
    return {
        "messages": shown,
        "unread": sum(1 for m in box.messages if not m["read"]),
        "queued": messages.outgoing(bundle),
        "problems": box.problems,
    }


class MessagePeerInput(ToolInput):
    agent: str = Field(description="the peer agent's name")
    bundle: str = Field(
        description="the path of the peer's bundle on this machine, or the git URL of its "
        "bundle's repository (a remote peer: delivered by ouro sync)"
    )


def message_peer(bundle: Bundle, inp: MessagePeerInput) -> dict[str, Any]:
    return {"peer": messages.set_peer(bundle, inp.agent, inp.bundle)}


class MessageRetryInput(ToolInput):
    pass


def message_retry(bundle: Bundle, inp: MessageRetryInput) -> dict[str, Any]:
    return {"retried": messages.retry(bundle)}


def _line(m: dict[str, Any]) -> str:
    task = f" [task {m['task']}]" if m.get("task") else ""
    mark = "" if m.get("read", True) else "* "
    return f"  {mark}{m['id']} {m.get('kind')} from {m.get('from')}{task}: {m.get('text')}"


def render_message(result: dict[str, Any]) -> str:
    if "peer" in result:
        p = result["peer"]
        return f"peer {p['agent']} → {p.get('bundle') or p.get('remote')}"
    if "retried" in result and "message" not in result:
        done = [r for r in result["retried"] if r["delivered"]]
        lines = [f"{len(done)} of {len(result['retried'])} queued message(s) delivered"]
        lines.extend(
            f"  {r['id']} to {r['to']}: still queued ({r['reason']})"
            for r in result["retried"]
            if not r["delivered"]
        )
        return "\n".join(lines)
    if "message" in result:
        m = result["message"]
        if result["delivered"]:
            return f"sent {m['kind']} {m['id']} to {m['to']}"
        return f"queued {m['kind']} {m['id']} for {m['to']}: {result['queuedReason']}"
    lines = []
    if "unread" in result:
        lines.append(f"{len(result['messages'])} message(s), {result['unread']} unread:")
    lines.extend(_line(m) for m in result["messages"])
    for q in result.get("queued") or []:
        lines.append(f"  queued {q['id']} to {q['to']}: {q['queuedReason']}")
    lines.extend(f"problem: {p}" for p in result.get("problems") or [])
    return "\n".join(lines) or "no unread messages"
