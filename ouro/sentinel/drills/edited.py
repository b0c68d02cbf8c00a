"""Drill ``edited-by-hand``: Arc files edited and damaged in place are seen at once.

On the copy, after one write has cached everything in ``latest.json``, the
drill changes Arc files the way a person with an editor would — same inode,
no ouro verb, no later write to refresh any cache:

1. closes an open obligation by rewriting its ``status`` in place: the packet
   and the resume must stop listing it;
2. writes ``{bad`` into another obligation file: the packet must name it
   unknown/unreadable and the gauntlet must not say ready;
3. edits the text of a claim in place: the packet must show the new text;
4. edits the current ask inside an earlier event line: the packet must show
   the edited ask.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ouro.arc import paths
from ouro.bundle import Bundle
from ouro.sentinel.drills.harness import DrillAborted, Probe
from ouro.store import jsonio


def _rewrite(path: Path, data: bytes) -> None:
    """Write ``data`` through the same inode (an in-place save)."""
    inode = path.stat().st_ino
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
    if path.stat().st_ino != inode:
        raise DrillAborted(f"{path.name} changed inode on an in-place write")


def _edit_json(path: Path, **change: object) -> None:
    data = jsonio.loads(path.read_bytes())
    data.update(change)
    _rewrite(path, orjson.dumps(data, option=orjson.OPT_INDENT_2))


def run(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.arc import claims, obligations
    from ouro.arc.recorder import record_event
    from ouro.arc.resume import read_resume
    from ouro.sentinel.gauntlet import evaluate

    ask_text = "drill: port the parser " + bundle.root.name
    ask = record_event(bundle, "turn_accepted", "drill ask", current_ask=ask_text)
    record_event(bundle, "agent_note", "drill next", next_safe_action="drill: run the tests")
    closed = obligations.add_obligation(bundle, "drill: send the summary", owed_to="drill")
    damaged = obligations.add_obligation(bundle, "drill: reply to the lead", owed_to="drill")
    claim = claims.add_claim(bundle, "drill: the parser handles tabs")
    record_event(bundle, "agent_note", "drill: everything cached")  # latest.json is current

    folder = paths.obligations_dir(bundle)
    _edit_json(folder / f"{closed['id']}.json", status="done")
    _rewrite(folder / f"{damaged['id']}.json", b"{bad")
    claim_path = paths.claims_dir(bundle) / f"{claim['id']}.json"
    _edit_json(claim_path, text="drill: the parser handles tabs and CRLF")
    day = paths.events_dir(bundle) / paths.day_file_name(ask["recordedAt"])
    edited_ask = ask_text.replace("port the parser", "port the lexer")
    raw = day.read_bytes()
    if raw.count(ask_text.encode()) < 1:
        raise DrillAborted("the drill's ask line is not in its day file")
    _rewrite(day, raw.replace(ask_text.encode(), edited_ask.encode()))

    packet = orient.build_packet(bundle, budget=20_000)
    text = packet.text
    resume = read_resume(bundle)
    ob_lines = [i.text for i in packet.items if i.section == "obligations"]
    probe.expect(
        not any(line.startswith(f"{closed['id']}:") for line in ob_lines),
        "an obligation closed by an in-place edit is no longer listed in the packet",
        look_at=paths.obligation_locator(closed["id"], inner=False),
    )
    probe.expect(
        closed["id"] not in (resume["activeObligationIds"] or []),
        "the resume no longer counts the obligation closed in place",
        look_at="ouro arc resume --json",
    )
    probe.expect(
        any(line.startswith(f"{damaged['id']}: unknown") for line in ob_lines),
        "an obligation file damaged in place reads unknown in the packet",
        look_at=paths.obligation_locator(damaged["id"], inner=False),
    )
    probe.expect(
        damaged["id"] in (resume.get("unreadableObligationIds") or []),
        "the resume names the damaged obligation as unreadable",
        look_at="ouro arc resume --json",
    )
    gauntlet = evaluate(bundle).gauntlet
    probe.expect(
        gauntlet.verdict != "ready",
        "the gauntlet does not say ready with a damaged obligation file",
        gauntlet.verdict,
        look_at="ouro sentinel status",
    )
    probe.expect(
        "handles tabs and CRLF" in text,
        "a claim edited in place shows its new text in the packet",
        look_at=paths.claim_locator(claim["id"]),
    )
    probe.expect(
        resume["currentAsk"]["value"] == edited_ask and "port the lexer" in text,
        "an event line edited in place is what the packet and resume show",
        str(resume["currentAsk"]["value"])[:80],
        look_at=paths.event_locator(day.name, ask["id"]),
    )
