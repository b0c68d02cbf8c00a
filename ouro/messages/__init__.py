"""Messages between agents' bundles: typed, redacted, size-limited, never lost.

Files (all JSONL, locked single-write appends with fsync, ``ouro.store.jsonl``):

- ``arc/messages/inbox.jsonl`` — messages delivered to this bundle, one
  object per line: ``{"id": "m-…", "at", "from", "fromBundle", "to", "kind",
  "text", "task", "replyTo"}``. Written by the *sender's* process into the
  recipient's bundle; a line repeated by a retried delivery counts once (by id).
- ``arc/messages/read.jsonl`` — ``{"id", "at"}``: messages this bundle has read.
- ``arc/messages/sent.jsonl`` — the sender's own log: ``{"event": "sent",
  "message": {…}}`` first (before any delivery is tried), then ``{"event":
  "delivered", "id", "at"}`` or ``{"event": "queued", "id", "at", "reason"}``.
  A message is pending until a ``delivered`` line follows it; pending messages
  are tried again by every ``send`` and by ``retry``. A crash between the lines
  leaves it pending, never lost.
- ``arc/peers.json`` — ``{"peers": {"<agent>": {"bundle": "<path>"}}}``: where
  each peer's bundle is on this machine, or ``{"remote": "<git url>"}`` for a
  peer whose bundle is a git repository elsewhere (``ouro message peer``; a
  URL, ``host:path`` or a bare repository is remote); written atomically under
  ``state/locks/peers.lock``.
- ``state/messages/peers/<agent>/`` — a scratch clone of a remote peer's
  bundle repository (machine-local, never synced; ``ouro.messages.remote``).

A message to a remote peer is queued by ``send`` ("delivered by the next
sync") and delivered by ``ouro sync`` and ``ouro message retry``: appended to
the inbox in the scratch clone, committed and pushed with the ``git`` CLI; the
peer's own sync merges its inbox by JSONL union. A failed fetch, commit or
push leaves it queued with git's reason.

Contract: kinds are ``question|answer|status|handoff|blocker``; the text is
redacted (``ouro.proof.redact``, with the sender's literals) before anything is
written, and refused above ``MAX_TEXT`` characters. A peer whose bundle is
missing or unwritable leaves the message queued with the reason. Reading the
inbox for a packet or a list writes nothing; ``read`` and ``reply`` record
what was read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, NotFound, OuroError
from ouro.models.clock import utc_now_iso
from ouro.models.ids import new_id
from ouro.models.meta import check_agent
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.jsonl import append_jsonl, read_jsonl
from ouro.store.lock import FileLock

KINDS = ("question", "answer", "status", "handoff", "blocker")
MAX_TEXT = 4000
INBOX = "arc/messages/inbox.jsonl"
READ = "arc/messages/read.jsonl"
SENT = "arc/messages/sent.jsonl"
PEERS = "arc/peers.json"


class Inbox:
    __slots__ = ("messages", "problems")

    def __init__(self, problems: list[str] | None = None) -> None:
        self.messages: list[dict[str, Any]] = []  # oldest first, with "read"
        self.problems: list[str] = problems or []


def _name(value: str, what: str) -> str:
    """A peer's name: an agent name, by the one rule (``ouro.models.meta``)."""
    return check_agent(value, field=what, hint=f"name the {what} as its bundle.json does")


def read_peers(bundle: Bundle) -> dict[str, dict[str, Any]]:
    path = bundle.root / PEERS
    try:
        data = jsonio.loads(file_bytes(path))
    except FileNotFoundError:
        return {}
    except (OSError, jsonio.JSONDecodeError) as exc:
        raise CorruptFile(
            f"{PEERS}: unreadable ({exc})", hint="fix it by hand or set the peer again"
        ) from None
    peers = data.get("peers") if isinstance(data, dict) else None
    if not isinstance(peers, dict):
        raise CorruptFile(f"{PEERS}: no 'peers' object", hint='expected {"peers": {...}}')
    return {k: v for k, v in peers.items() if isinstance(v, dict)}


def is_remote(where: str) -> bool:
    """A git URL, ``host:path`` or a bare repository (not a bundle folder)."""
    if "://" in where or (re.match(r"^[\w.@-]+:(?!//)", where) and not os.path.exists(where)):
        return True
    path = Path(os.path.expanduser(where))
    if (path / "bundle.json").is_file():
        return False
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def set_peer(bundle: Bundle, agent: str, peer_bundle: str) -> dict[str, Any]:
    name = _name(agent, "agent")
    entry: dict[str, Any]
    if is_remote(peer_bundle):
        entry = {"remote": peer_bundle.strip()}
    else:
        entry = {"bundle": os.path.abspath(os.path.expanduser(peer_bundle))}
    with FileLock(bundle.lock_path("peers"), purpose="message peers"):
        peers = read_peers(bundle)
        peers[name] = entry
        atomic_write_json(bundle.root / PEERS, {"peers": dict(sorted(peers.items()))})
    return {"agent": name, **entry}


def _deliver(message: dict[str, Any], target: str | None) -> str | None:
    """Append to the peer's inbox; None when delivered, else why not."""
    if not target:
        return f"no bundle configured for {message['to']} (ouro message peer {message['to']} PATH)"
    root = Path(target)
    if not (root / "bundle.json").is_file():
        return f"{target} is not a reachable bundle (no bundle.json)"
    try:
        append_jsonl(root / INBOX, [message])
    except (OuroError, OSError) as exc:
        return f"{target}: {exc.message if isinstance(exc, OuroError) else exc}"
    return None


def _pending(bundle: Bundle) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Sent messages not yet delivered (oldest first) and the last reason for each."""
    log = read_jsonl(bundle.root / SENT)
    sent: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for rec in log.records:
        event = rec.get("event")
        if event == "sent" and isinstance(rec.get("message"), dict):
            sent[str(rec["message"].get("id"))] = rec["message"]
        elif event == "delivered":
            sent.pop(str(rec.get("id")), None)
        elif event == "queued":
            reasons[str(rec.get("id"))] = str(rec.get("reason"))
    return list(sent.values()), reasons


REMOTE_LATER = "the peer is remote: delivered by the next 'ouro sync' (or 'ouro message retry')"


def _peer(bundle: Bundle, agent: str) -> tuple[dict[str, Any], str | None]:
    try:
        return read_peers(bundle).get(agent, {}), None
    except CorruptFile as exc:
        return {}, exc.message


def _record(bundle: Bundle, message: dict[str, Any], reason: str | None) -> None:
    if reason is None:
        append_jsonl(
            bundle.root / SENT, [{"event": "delivered", "id": message["id"], "at": utc_now_iso()}]
        )
    else:
        append_jsonl(
            bundle.root / SENT,
            [{"event": "queued", "id": message["id"], "at": utc_now_iso(), "reason": reason}],
        )


def _try(bundle: Bundle, message: dict[str, Any]) -> str | None:
    peer, reason = _peer(bundle, str(message["to"]))
    if reason is None and peer.get("remote"):
        reason = REMOTE_LATER
    if reason is None:
        found = peer.get("bundle")
        target = str(found) if found else message.get("toBundle")
        reason = _deliver(message, target)
    _record(bundle, message, reason)
    return reason


def retry(bundle: Bundle, *, remote: bool = True) -> list[dict[str, Any]]:
    """Try every pending message again (remote peers through git when ``remote``);
    returns one outcome per message."""
    pending, _ = _pending(bundle)
    out = []
    outcomes: dict[str, str | None] = {}
    if remote:
        from ouro.messages.remote import deliver_remote

        by_peer: dict[str, list[dict[str, Any]]] = {}
        urls: dict[str, str] = {}
        for message in pending:
            peer, _bad = _peer(bundle, str(message["to"]))
            if peer.get("remote"):
                by_peer.setdefault(str(message["to"]), []).append(message)
                urls[str(message["to"])] = str(peer["remote"])
        for agent, batch in by_peer.items():
            reason = deliver_remote(bundle, agent, urls[agent], batch)
            for message in batch:
                _record(bundle, message, reason)
                outcomes[str(message["id"])] = reason
    for message in pending:
        mid = str(message["id"])
        reason = outcomes[mid] if mid in outcomes else _try(bundle, message)
        out.append(
            {
                "id": message["id"],
                "to": message["to"],
                "delivered": reason is None,
                "reason": reason,
            }
        )
    return out


def send(
    bundle: Bundle,
    to: str,
    text: str,
    *,
    kind: str,
    sender: str,
    task: str | None = None,
    reply_to: str | None = None,
    to_bundle: str | None = None,
) -> dict[str, Any]:
    """Record, then deliver (or queue) one message; earlier pending ones are retried first."""
    from ouro.proof.redact import bundle_literals, redact

    if kind not in KINDS:
        raise InvalidInput(f"kind: {kind!r} is not one of {', '.join(KINDS)}", hint="pick one")
    if not text.strip():
        raise InvalidInput("text: empty message", hint="say something")
    if len(text) > MAX_TEXT:
        raise InvalidInput(
            f"text: {len(text)} characters, over the {MAX_TEXT} limit",
            hint="send a summary and point to a file or task for the rest",
        )
    message = {
        "id": new_id("m"),
        "at": utc_now_iso(),
        "from": sender,
        "fromBundle": str(bundle.root.resolve()),
        "to": _name(to, "agent"),
        "kind": kind,
        "text": redact(text, bundle_literals(bundle)),
        "task": task,
        "replyTo": reply_to,
    }
    if to_bundle:
        message["toBundle"] = to_bundle
    earlier = retry(bundle, remote=False)
    append_jsonl(bundle.root / SENT, [{"event": "sent", "message": message}])
    reason = _try(bundle, message)
    return {
        "message": message,
        "delivered": reason is None,
        "queuedReason": reason,
        "retried": earlier,
    }


def inbox(bundle: Bundle) -> Inbox:
    """Every delivered message (deduplicated by id), each with ``read``. Pure."""
    got = read_jsonl(bundle.root / INBOX)
    seen = read_jsonl(bundle.root / READ)
    read_ids = {str(r.get("id")) for r in seen.records}
    bad = [(INBOX, b) for b in got.bad] + [(READ, b) for b in seen.bad]
    out = Inbox(
        problems=[f"{where}:{b.line_no}: {b.reason} (line kept as it is)" for where, b in bad]
    )
    ids: set[str] = set()
    for rec in got.records:
        mid = str(rec.get("id"))
        if mid in ids:
            continue
        ids.add(mid)
        out.messages.append({**rec, "read": mid in read_ids})
    return out


def mark_read(bundle: Bundle, ids: list[str]) -> None:
    if ids:
        now = utc_now_iso()
        append_jsonl(bundle.root / READ, [{"id": i, "at": now} for i in ids])


def find(bundle: Bundle, message_id: str) -> dict[str, Any]:
    for message in inbox(bundle).messages:
        if message.get("id") == message_id:
            return message
    raise NotFound(f"no message {message_id!r} in {INBOX}", hint="'ouro message list' shows them")


def outgoing(bundle: Bundle) -> list[dict[str, Any]]:
    pending, reasons = _pending(bundle)
    return [{**m, "queuedReason": reasons.get(str(m["id"]), "not tried yet")} for m in pending]
