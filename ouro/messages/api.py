"""Messages: the rendering of ``b.message`` results (``ouro.api.talk``) and the old CLI input models.

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro import messages
from ouro.models.base import ToolInput

Kind = Literal["question", "answer", "status", "handoff", "blocker"]


class MessageSendInput(ToolInput):
    agent: str = Field(description="the recipient agent (a peer: ouro message peer)")
    text: str = Field(description=f"the message (redacted; at most {messages.MAX_TEXT} chars)")
    kind: Kind = Field("status", description="question, answer, status, handoff or blocker")
    task: str | None = Field(None, description="the task it is about (id)")
    sender: str | None = Field(None, description="who sends it (default: the bundle's agent)")


class MessageReplyInput(ToolInput):
    message_id: str = Field(description="the id (m-…) of the message in your inbox")
    text: str = Field(description="the reply (redacted; size-limited)")
    kind: Kind = Field("answer", description="question, answer, status, handoff or blocker")
    sender: str | None = Field(None, description="who replies (default: the bundle's agent)")


class MessageReadInput(ToolInput):
    message_id: str | None = Field(None, description="one message (default: every unread one)")


class MessageListInput(ToolInput):
    unread: bool = Field(False, description="only unread messages")
    limit: int | None = Field(None, ge=1, description="at most this many (newest)")


class MessagePeerInput(ToolInput):
    agent: str = Field(description="the peer agent's name")
    bundle: str = Field(
        description="the path of the peer's bundle on this machine, or the git URL of its "
        "bundle's repository (a remote peer: delivered by ouro sync)"
    )


class MessageRetryInput(ToolInput):
    pass


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
