"""``UserPromptSubmit`` decides "nothing changed" from the packet's basis
(``ouro.hooks.basis``) and ``PostToolUse`` decides "no declared check" from the
declared-checks list (``ouro.derived.checks``); neither may miss a change.

- every bundle file the orientation packet opens or lists is under the basis
  (an audit hook watches ``open``, ``os.listdir`` and ``os.scandir``);
- a change made through the library after the session's last injection still
  arrives as a delta, and an idle prompt is decided without the packet;
- a check declared after the list was saved still gets its receipt; an
  unrelated command leaves the record as it was.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ouro.api as api
from ouro.arc.claims import add_claim
from ouro.arc.obligations import add_obligation
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.derived import checks
from ouro.hooks import basis as bases
from ouro.orient import agent_name, collect_items
from ouro.proof.redact import bundle_literals
from tests.conftest import run_ouro, snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "hooks" / "claude"
#: read by the Arc provider through the resume view, which the basis digests
ARC_VIEW = ("arc/claims/", "arc/obligations/", "arc/flight-recorder/events/")
TASK_FILE = re.compile(r"^desk/[^_/][^/]*/[^/]+/task\.md$")


def busy(bundle: Bundle) -> None:
    b = api.open(bundle.root)
    b.desk.track.add("web")
    b.desk.task.add("web", "Fix login", check="pytest -q")
    (bundle.root.parent / "src.txt").write_text("v1\n")
    add_claim(bundle, "tests pass", about=["src.txt"], check="true")
    add_obligation(bundle, "send the report", owed_to="ana", due="2020-01-01")
    record_event(bundle, "agent_note", "ask", current_ask="ship it", next_safe_action="test")


def _covered(rel: str, files: dict[str, str]) -> bool:
    if rel in files or rel == "arc/flight-recorder/latest.json":
        return True
    if rel.startswith(ARC_VIEW) or rel + "/" in ARC_VIEW or TASK_FILE.match(rel):
        return True  # the resume view; the desk heads
    if rel.startswith(("state/locks/", "state/cache")):  # a cache heal's writes, not inputs
        return True
    return any(rel == folder or rel.startswith(folder + "/") for folder in bases.FOLDERS)


def test_every_file_the_packet_reads_is_under_its_basis(bundle: Bundle) -> None:
    busy(bundle)
    root = os.path.realpath(bundle.root)
    seen: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event in ("open", "os.listdir", "os.scandir") and args and args[0] is not None:
            if isinstance(args[0], int):
                return
            flags = args[2] if event == "open" and len(args) > 2 else None
            if isinstance(flags, int) and flags & getattr(os, "O_PATH", 0):
                return  # resolves a folder (``ouro.store.guard.realpath``): reads nothing
            path = os.fspath(args[0])
            if isinstance(path, bytes):
                path = path.decode()
            seen.append(path)

    taken = bases.take(bundle)
    sys.addaudithook(audit)  # stays for the process: it only appends to a list
    start = len(seen)
    collect_items(bundle)
    bundle_literals(bundle)
    agent_name(bundle)
    read = seen[start:]
    seen.append("")  # any later event is not ours: stop looking
    del seen[:]
    inside = []
    for path in read:
        full = os.path.realpath(path if os.path.isabs(path) else os.path.join(bundle.root, path))
        if full.startswith(root + os.sep):
            inside.append(os.path.relpath(full, root).replace(os.sep, "/"))
    assert inside, "the packet read nothing?"
    # state/locks is opened (O_PATH, ouro.store.guard.confine) to take a lock, not read
    inside = [rel for rel in inside if rel != "state/locks" and not rel.startswith("state/locks/")]
    missed = sorted({rel for rel in inside if not _covered(rel, taken["files"])})
    assert missed == [], missed


def _hook(bundle: Bundle, event: str, **extra: Any) -> Any:
    data = json.loads((FIXTURES / f"{event}.json").read_text())
    data.update({"session_id": "s-basis", "cwd": str(bundle.root / "desk")}, **extra)
    return run_ouro("hook", "claude", event, input=json.dumps(data))


def _context(proc: Any) -> str:
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout:
        return ""
    return str(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])


def _settle(bundle: Bundle) -> None:
    """Past the racy window of every write so far (the claim summaries in the
    resume view keep a stamp only once trusted): idle prompts save a trusted basis."""
    for _ in range(2):
        time.sleep(0.15)
        assert _context(_hook(bundle, "UserPromptSubmit")) == ""


@pytest.mark.parametrize("change", ["task", "claim", "obligation", "ask", "message"])
def test_a_change_after_the_last_injection_still_arrives(
    bundle: Bundle, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy(bundle)
    assert "# orient" in _context(_hook(bundle, "SessionStart"))
    _settle(bundle)
    from ouro.hooks import packet

    # settled: an idle prompt is decided by the basis alone, the packet untouched
    with monkeypatch.context() as patch:
        patch.setattr(packet, "changed_context", lambda *a, **k: pytest.fail("computed"))
        state = bundle.root / "state/hooks/claude-s-basis.json"
        before = state.stat().st_mtime_ns
        assert _context(_hook(bundle, "UserPromptSubmit")) == ""
        assert state.stat().st_mtime_ns == before  # silent: no write
    b = api.open(bundle.root)
    if change == "task":
        b.desk.task.add("web", "Write the changelog")
        needle = "Write the changelog"
    elif change == "claim":
        add_claim(bundle, "the docs build", check="make docs")
        needle = "the docs build"
    elif change == "obligation":
        add_obligation(bundle, "call the vendor", owed_to="bo", due="2020-02-02")
        needle = "call the vendor"
    elif change == "ask":
        record_event(bundle, "agent_note", "asked", current_ask="cut the release")
        needle = "cut the release"
    else:
        inbox = bundle.root / "arc/messages/inbox.jsonl"
        inbox.parent.mkdir(parents=True, exist_ok=True)
        message = {
            "id": "m-01basis", "at": "2026-01-01T00:00:00Z", "from": "ana",
            "fromBundle": "/elsewhere/ana.ouro", "to": "tester", "kind": "question",
            "text": "ready?", "task": None, "replyTo": None,
        }  # fmt: skip
        with inbox.open("a") as handle:
            handle.write(json.dumps(message) + "\n")
        needle = "unread"
    delta = _context(_hook(bundle, "UserPromptSubmit"))
    assert delta.startswith("# ouro: changed since this session's last orientation")
    assert needle in delta
    assert _context(_hook(bundle, "UserPromptSubmit")) == ""  # shown once


def test_a_check_declared_after_the_list_was_saved_gets_its_receipt(bundle: Bundle) -> None:
    busy(bundle)
    cwd = str(bundle.root.parent)
    tool = json.loads((FIXTURES / "PostToolUse.json").read_text())
    tool.update(session_id="s-checks", cwd=cwd, tool_input={"command": "ls -la"})
    tool["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    before = snapshot(bundle.root, state=False)
    assert run_ouro("hook", "claude", "PostToolUse", input=json.dumps(tool)).stdout == ""
    assert snapshot(bundle.root, state=False) == before  # an unrelated command
    assert checks.check(bundle).state == "stale"  # built within the racy window of busy()
    for _ in range(3):  # built again, with trusted stamps (a heads heal moves one: again)
        time.sleep(0.15)
        assert "ls -la" not in checks.declared(bundle)
        if checks.check(bundle).state == "fresh":
            break
    assert checks.check(bundle).state == "fresh"
    for declare in ("claim", "task"):
        command = f"make verify-{declare}"
        if declare == "claim":
            add_claim(bundle, "verified", check=command)
        else:
            api.open(bundle.root).desk.task.add("web", "Verify", check=command)
        assert checks.check(bundle).state == "stale"
        tool.update(tool_input={"command": command}, tool_use_id=f"toolu_{declare}")
        run_ouro("hook", "claude", "PostToolUse", input=json.dumps(tool))
        events = (bundle.root / "arc/flight-recorder/events").glob("*.jsonl")
        text = "".join(p.read_text() for p in events)
        assert command in text, f"no receipt event for the {declare}'s check"


def test_the_arc_digest_is_the_same_inside_a_run_and_outside(bundle: Bundle) -> None:
    """Inside ``one_run`` the basis takes the checkpoint the event's write just
    computed; outside it (``SessionStart``), the checkpoint as read: the same
    digest (the summaries count by ``storesDigest``), so a prompt after a session
    start is decided by the basis. A changed claim changes it; so does a claim
    edited in place with its size kept."""
    from ouro.arc.checkpoint import one_run
    from ouro.arc.resume import read_resume_full

    busy(bundle)
    made = [
        add_claim(bundle, f'claim {n} with "quotes", "stores":{{}} and ünïcode') for n in range(3)
    ]
    time.sleep(0.15)  # past the racy window: no claim line is re-stamped between the reads
    with one_run():
        record_event(bundle, "turn_accepted", "a turn")
        inside = bases._arc_digest(read_resume_full(bundle))
    assert bases._arc_digest(read_resume_full(bundle)) == inside
    add_claim(bundle, "one more")
    after = bases._arc_digest(read_resume_full(bundle))
    assert after != inside
    path = bundle.root / "arc" / "claims" / f"{made[0]['id']}.json"
    text = path.read_text()
    path.write_text(text.replace("claim 0", "claim 9"))
    assert bases._arc_digest(read_resume_full(bundle)) != after
