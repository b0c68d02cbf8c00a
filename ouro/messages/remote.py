"""Delivering messages to a remote peer with the ``git`` command line.

A remote peer (``arc/peers.json`` ``{"remote": URL}``) is the git repository
of the peer's bundle. Its pending messages are delivered in one commit:

1. a scratch clone at ``state/messages/peers/<agent>/`` (machine-local, never
   synced) is cloned once, then fetched and reset to the remote's branch (one
   whose ``.git`` is not its own, ``ouro.store.git``, is removed and cloned anew);
2. the messages not already there (by id) are appended to its
   ``arc/messages/inbox.jsonl``, committed and pushed;
3. a rejected push (the peer pushed meanwhile) fetches and goes round again
   (3 tries).

Any failure returns git's reason and leaves the messages queued; the peer's
own ``ouro sync`` merges the inbox by JSONL union, so nothing it wrote is lost.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.store import jsonio
from ouro.store.git import Git, first_line, own_repository_problem
from ouro.store.jsonl import append_jsonl, read_jsonl

TRIES = 3


def scratch(bundle: Bundle, agent: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", agent)[:60]
    digest = hashlib.sha1(agent.encode()).hexdigest()[:8]
    return bundle.root / "state" / "messages" / "peers" / f"{safe}-{digest}"


def _prepare(bundle: Bundle, agent: str, url: str) -> tuple[Git, str]:
    """The scratch clone at the remote's tip; returns it and the branch."""
    path = scratch(bundle, agent)
    if path.exists() and own_repository_problem(path):  # a .git leading elsewhere: made anew
        shutil.rmtree(path)  # removes a symlink, never what it points to
    if path.exists():
        git = Git(path)
        if git.out("remote", "get-url", "origin") != url:
            shutil.rmtree(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        Git.outside(path.parent).run("clone", "--quiet", "--no-tags", url, str(path))
    git = Git(path)
    git.run("fetch", "--quiet", "--no-tags", "origin")
    head = git.run("symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD", check=False)
    ref = head.stdout.decode().strip()
    if not ref:
        heads = git.lines("for-each-ref", "--format=%(refname:short)%00", "refs/remotes/origin/")
        heads = [h for h in heads if h != "origin/HEAD"]
        if not heads:
            raise OuroError(
                f"{url} has no commits yet (the peer has not synced its bundle there)",
                hint="the message stays queued; it goes out once the peer has synced",
            )
        ref = "origin/main" if "origin/main" in heads else heads[0]
    git.run("reset", "--quiet", "--hard", ref)
    return git, ref.split("/", 1)[1]


def deliver_remote(
    bundle: Bundle, agent: str, url: str, messages: list[dict[str, Any]]
) -> str | None:
    """Push ``messages`` into the remote peer's inbox; None when delivered, else why not."""
    from ouro.messages import INBOX

    try:
        for _ in range(TRIES):
            git, branch = _prepare(bundle, agent, url)
            if not (git.cwd / "bundle.json").is_file():
                return f"{url}: not an ouro bundle's repository (no bundle.json at its tip)"
            inbox = git.cwd / INBOX
            there = {str(r.get("id")) for r in read_jsonl(inbox).records}
            new = [m for m in messages if str(m["id"]) not in there]
            if not new:
                return None
            append_jsonl(inbox, new)
            git.run("add", "--", INBOX)
            senders = sorted({str(m.get("from")) for m in new})
            git.run(
                "commit",
                "--quiet",
                "-m",
                f"ouro message: {len(new)} message(s) for {agent} from {', '.join(senders)}",
            )
            proc = git.run("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", check=False)
            if proc.returncode == 0:
                return None
            err = proc.stderr.decode("utf-8", "replace")
            if "fetch first" not in err and "non-fast-forward" not in err:
                return f"git push to {url} failed: {first_line(proc)}"
        return f"{url} kept moving: {TRIES} pushes were rejected"
    except OuroError as exc:
        return f"{url}: {exc.message}"
    except (OSError, jsonio.JSONDecodeError) as exc:
        return f"{url}: {exc}"
