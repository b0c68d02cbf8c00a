"""Meaningful text is never blank (issue 26, item 5).

An ask, a next action, each stop-before item, a handoff, a blocker, an
obligation's text and recipient and a claim's text refuse empty and
whitespace-only values with the field named, on every path (CLI, MCP,
library). A blank ask or next action already in the files -- written by hand
or by an old ouro -- reads as missing: resume cannot continue and says why,
the sentinel is not ready, orient says unknown.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from ouro.api import call as invoke
from ouro.arc import claims, obligations, paths
from ouro.arc.recorder import build_event, record_event
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.orient import build_packet
from ouro.sentinel.checks import check_current_ask, check_next_action
from ouro.sentinel.receipts import refresh
from tests.conftest import run_ouro, snapshot

BLANKS = ["", "   ", " \t\n ", "\u3000", "\u200b\u200b"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["arc", "ask", "{}"], "text"),
        (["arc", "next", "{}"], "text"),
        (["arc", "next", "run the tests", "--stop-before", "{}"], "stop_before[0]"),
        (["arc", "handoff", "{}"], "text"),
        (["arc", "blocker", "{}"], "text"),
        (["arc", "note", "{}"], "text"),
        (["obligation", "add", "{}", "--to", "ari"], "what"),
        (["obligation", "add", "a reply", "--to", "{}"], "to"),
        (["claim", "add", "{}"], "text"),
    ],
)
def test_the_cli_refuses_blank_text_naming_the_field(
    bundle: Bundle, args: list[str], field: str
) -> None:
    before = snapshot(bundle.root)
    for blank in BLANKS[1:]:  # '' is an empty argument: click's own message
        proc = run_ouro(*[blank if a == "{}" else a for a in args], bundle=bundle)
        assert proc.returncode == 2, proc.stdout
        assert f": {field}: " in proc.stderr and "empty or only whitespace" in proc.stderr
    assert snapshot(bundle.root) == before


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("arc_ask", {"text": "{}"}, "text"),
        ("arc_next", {"text": "go", "stop_before": ["deploying", "{}"]}, "stop_before[1]"),
        ("arc_handoff", {"text": "{}"}, "text"),
        ("obligation_add", {"what": "x", "to": "{}"}, "to"),
        ("claim_add", {"text": "{}"}, "text"),
    ],
)
def test_the_tool_path_refuses_blank_text(
    bundle: Bundle, tool: str, arguments: dict[str, object], field: str
) -> None:
    for blank in BLANKS:

        def fill(value: object, blank: str = blank) -> object:
            if isinstance(value, list):
                return [fill(v) for v in value]
            return blank if value == "{}" else value

        with pytest.raises(InvalidInput) as caught:
            invoke(tool, bundle, {k: fill(v) for k, v in arguments.items()})
        assert f"{tool}: {field}: " in caught.value.message


def test_mcp_refuses_a_blank_ask(bundle: Bundle) -> None:
    from tests.mcp_client import session, text_of

    async def go() -> tuple[bool, str]:
        async with session(bundle.root) as client:
            result = await client.call_tool("arc_ask", {"text": "   "})
            return bool(result.is_error), text_of(result)

    is_error, text = asyncio.run(go())
    assert is_error and "text:" in text and "empty or only whitespace" in text


def test_the_library_refuses_blank_text(bundle: Bundle) -> None:
    for blank in BLANKS:
        _library_refuses(bundle, blank)
    assert read_resume(bundle)["eventCount"] == 0


def _library_refuses(bundle: Bundle, blank: str) -> None:
    with pytest.raises(InvalidInput, match="current_ask: must not be empty"):
        record_event(bundle, "turn_accepted", "ask", current_ask=blank)
    with pytest.raises(InvalidInput, match="next_safe_action: must not be empty"):
        record_event(bundle, "agent_note", "next", next_safe_action=blank)
    with pytest.raises(InvalidInput, match="stop_before: must not be empty"):
        build_event(bundle, "agent_note", "next", next_safe_action="go", stop_before=[blank])
    with pytest.raises(InvalidInput, match="blocked_because: must not be empty"):
        record_event(bundle, "blocker_detected", "blocked", blocked_because=blank)
    with pytest.raises(InvalidInput, match="text: must not be empty"):
        record_event(bundle, "handoff", blank)
    with pytest.raises(InvalidInput, match="what: must not be empty"):
        obligations.add_obligation(bundle, blank, owed_to="ari")
    with pytest.raises(InvalidInput, match="to: must not be empty"):
        obligations.add_obligation(bundle, "a reply", owed_to=blank)
    with pytest.raises(InvalidInput, match="text: must not be empty"):
        claims.add_claim(bundle, blank)


# --- blank text already in the files reads as missing -------------------------


def _write_raw(bundle: Bundle, *events: dict[str, object]) -> None:
    """Append event lines as an old ouro (or a hand edit) left them."""
    start = datetime.now(UTC) - timedelta(minutes=5)
    folder = paths.events_dir(bundle)
    folder.mkdir(parents=True, exist_ok=True)
    for n, event in enumerate(events):
        at = (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        line = {"schemaVersion": 1, "id": f"ev-01m8snx2r1m0snp{n:03d}", "recordedAt": at, **event}
        with open(folder / paths.day_file_name(at), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def _blank_ask_and_next(ask: str = "   ", nxt: str = " ") -> list[dict[str, object]]:
    return [
        {"kind": "turn_accepted", "summary": f"ask: {ask}", "currentAsk": ask},
        {
            "kind": "agent_note",
            "summary": f"next safe action: {nxt}",
            "nextSafeAction": nxt,
            "stopBefore": [" "],
            "meta": {"askEventId": "ev-01m8snx2r1m0snp000"},
        },
    ]


def _assert_not_recoverable(bundle: Bundle) -> None:
    resume = read_resume(bundle)
    assert resume["canContinue"] is False and resume["continuation"] == "no"
    assert resume["currentAsk"]["value"] is None
    assert resume["currentAsk"]["confidence"] == "unknown"
    assert resume["nextSafeAction"]["value"] is None
    missing = " | ".join(resume["missing"])
    assert "currentAsk: blank" in missing and "nextSafeAction: blank" in missing
    text = run_ouro("arc", "resume", bundle=bundle).stdout
    assert "can continue: no" in text and "currentAsk: blank" in text

    refreshed = refresh(bundle)
    receipt = refreshed["receipt"]
    assert receipt["verdict"] != "ready" and not refreshed["latestReadyReplaced"]
    checks = {c["id"]: c for c in receipt["gauntlet"]["checks"]}
    assert checks["current_ask"]["status"] == "fail"
    assert checks["next_safe_action"]["status"] == "fail"
    assert "blank" in checks["current_ask"]["detail"]
    assert "blank" in checks["next_safe_action"]["detail"]
    assert not (bundle.arc / "flight-recorder/context-loss-sentinel/latest-ready.json").exists()

    packet = build_packet(bundle, budget=4000).text
    ask_line = packet.split("## ask", 1)[1].splitlines()[1]
    assert "[unknown]" in ask_line and "unknown" in ask_line.replace("[unknown]", "")
    next_line = packet.split("## next safe action", 1)[1].splitlines()[1]
    assert next_line.startswith("- unknown"), packet


def test_blank_ask_and_next_in_the_files_are_missing(bundle: Bundle) -> None:
    _write_raw(bundle, *_blank_ask_and_next())
    _assert_not_recoverable(bundle)
    # the persisted checkpoint (which folds the blank text) reads the same way
    run_ouro("arc", "checkpoint", bundle=bundle, check=True)
    _assert_not_recoverable(bundle)


def test_a_blank_ask_after_a_real_one_is_missing_not_the_old_one(bundle: Bundle) -> None:
    record_event(bundle, "turn_accepted", "ask: ship it", current_ask="ship it")
    record_event(bundle, "agent_note", "next: test", next_safe_action="run the tests")
    assert read_resume(bundle)["canContinue"] is True
    _write_raw(bundle, *_blank_ask_and_next("\u200b", "\t"))
    _assert_not_recoverable(bundle)
    confirm = run_ouro("arc", "confirm", bundle=bundle)
    assert confirm.returncode != 0  # nothing to confirm: the ask is missing


def test_the_gauntlet_reads_a_blank_value_from_an_old_snapshot_as_missing() -> None:
    ask = check_current_ask({"currentAsk": {"value": "  ", "confidence": "current"}})
    assert ask.status == "fail" and "blank" in ask.detail
    nxt = check_next_action({"nextSafeAction": {"value": " \n", "stopBefore": []}})
    assert nxt.status == "fail" and "blank" in nxt.detail
