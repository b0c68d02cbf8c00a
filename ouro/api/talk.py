"""``b.message``, ``b.lock``: talking to other agents and not colliding with them."""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.edge import MESSAGE
from ouro.spec import P, verb

KINDS = ("question", "answer", "status", "handoff", "blocker")
DEFAULT_TTL = "30m"  # ouro.locks.DEFAULT_TTL

Kind = Annotated[str, P("question, answer, status, handoff or blocker", choices=KINDS)]


class Message(Namespace):
    """Typed messages between agents' bundles."""

    def _agent(self, who: str | None) -> str:
        from ouro.desk.tasks import acting_agent

        return acting_agent(self.folder, who)

    @verb
    def send(
        self,
        agent: Annotated[str, P("the recipient agent (a peer: ouro message peer)")],
        text: Annotated[str, P("the message (redacted; at most 4000 chars)", limit=MESSAGE)],
        *,
        kind: Kind = "status",
        task: Annotated[
            str | None, P("the task it is about (id or <track>/<slug>; it must exist)")
        ] = None,
        sender: Annotated[str | None, P("who sends it (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Send a typed message (question, answer, status, handoff, blocker; optionally
        about a task) to another agent: appended to the inbox of the peer's bundle (ouro
        message peer). The text is redacted and size-limited; a peer that cannot be
        reached leaves it queued with the reason (retried by every send and by 'ouro
        message retry'), never lost."""
        from ouro import messages
        from ouro.desk.tasks import linked_task

        who = self._agent(sender)
        about = linked_task(self.folder, task)  # a task of this bundle, as friction's
        return messages.send(self.folder, agent, text, kind=kind, sender=who, task=about)

    @verb
    def reply(
        self,
        message_id: Annotated[str, P("the id (m-…) of the message in your inbox")],
        text: Annotated[str, P("the reply (redacted; size-limited)", limit=MESSAGE)],
        *,
        kind: Kind = "answer",
        sender: Annotated[str | None, P("who replies (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Reply to a message in your inbox: sent to its sender (kind answer by default),
        linked by replyTo, and the message is marked read."""
        from ouro import messages

        folder = self.folder
        who = self._agent(sender)
        original = messages.find(folder, message_id)
        result = messages.send(
            folder,
            str(original.get("from")),
            text,
            kind=kind,
            sender=who,
            task=original.get("task"),
            reply_to=message_id,
            to_bundle=original.get("fromBundle"),
        )
        if not original.get("read"):
            messages.mark_read(folder, [message_id])
        return result

    @verb
    def read(
        self,
        message_id: Annotated[str | None, P("one message (default: every unread one)")] = None,
    ) -> dict[str, Any]:
        """Read your unread messages (or one by id) and mark them read."""
        from ouro import messages

        folder = self.folder
        if message_id:
            shown = [messages.find(folder, message_id)]
            problems: list[str] = []
        else:
            box = messages.inbox(folder)
            shown, problems = [m for m in box.messages if not m["read"]], box.problems
        messages.mark_read(folder, [m["id"] for m in shown if not m["read"]])
        return {"messages": shown, "problems": problems}

    @verb
    def peer(
        self,
        agent: Annotated[str, P("the peer agent's name")],
        bundle: Annotated[
            str,
            P(
                "the path of the peer's bundle on this machine, or the git URL of its "
                "bundle's repository (a remote peer: delivered by ouro sync)"
            ),
        ],
    ) -> dict[str, Any]:
        """Say where a peer agent's bundle is on this machine, so messages to it are
        delivered to its inbox."""
        from ouro import messages

        return {"peer": messages.set_peer(self.folder, agent, bundle)}

    @verb
    def retry(self) -> dict[str, Any]:
        """Try every queued outgoing message again."""
        from ouro import messages

        return {"retried": messages.retry(self.folder)}

    @verb
    def list(
        self,
        *,
        unread: Annotated[bool, P("only unread messages")] = False,
        limit: Annotated[int | None, P("at most this many (newest)", min=1)] = None,
    ) -> dict[str, Any]:
        """List the messages in your inbox (read and unread) and your queued outgoing
        messages with the reason each is queued. Writes nothing."""
        from ouro import messages

        folder = self.folder
        box = messages.inbox(folder)
        shown = [m for m in box.messages if not (unread and m["read"])]
        if limit is not None:
            shown = shown[-limit:]
        return {
            "messages": shown,
            "unread": sum(1 for m in box.messages if not m["read"]),
            "queued": messages.outgoing(folder),
            "problems": box.problems,
        }


class Lock(Namespace):
    """Advisory path locks on the files you are changing."""

    def _agent(self, who: str | None) -> str:
        from ouro.desk.tasks import acting_agent

        return acting_agent(self.folder, who)

    @verb
    def take(
        self,
        paths: Annotated[list[str], P("a file or folder you are changing (repeatable)")],
        *,
        reason: Annotated[str, P("why, in one line (shown to anyone who collides)")] = "",
        ttl: Annotated[str, P("how long the lock lasts: 90s, 30m, 2h, 1d")] = DEFAULT_TTL,
        agent: Annotated[str | None, P("who takes it (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Take advisory locks on the files or folders you are changing (all or none):
        another agent's live lock on an overlapping path (equal, or a folder holding it)
        is a conflict naming holder, reason and expiry; your own are renewed; expired
        locks are swept. Locks end at their ttl."""
        from ouro import locks
        from ouro.desk.names import parse_duration

        who = self._agent(agent)
        seconds = parse_duration(ttl, field="ttl")
        taken, problems = locks.take(
            self.folder, paths, agent=who, reason=reason.strip(), ttl_seconds=seconds
        )
        return {"agent": who, "locks": [lk.to_json() for lk in taken], "problems": problems}

    @verb
    def release(
        self,
        paths: Annotated[list[str], P("a path to release (repeatable; none: all of yours)")] = [],
        *,
        agent: Annotated[str | None, P("the holder (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Release your path locks (the named paths, or all of yours); another agent's
        live lock is refused."""
        from ouro import locks

        who = self._agent(agent)
        gone, problems = locks.release(self.folder, paths or None, agent=who)
        return {"agent": who, "released": [lk.to_json() for lk in gone], "problems": problems}

    @verb
    def list(
        self, *, path: Annotated[str | None, P("only locks overlapping this path")] = None
    ) -> dict[str, Any]:
        """List live path locks (optionally those overlapping one path): path, holder,
        reason, expiry. Expired locks are ignored. Writes nothing."""
        from ouro import locks
        from ouro.models.clock import utc_now

        found = locks.list_locks(self.folder, now=utc_now(), path=path)
        return {"locks": [lk.to_json() for lk in found.locks], "problems": found.problems}
