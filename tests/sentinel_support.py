"""Helpers shared by the sentinel and drill tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.sentinel import paths


def make_ready(
    bundle: Bundle, ask: str = "ship the sentinel", nxt: str = "write the tests"
) -> None:
    record_event(bundle, "turn_accepted", f"ask: {ask}", current_ask=ask)
    record_event(bundle, "agent_note", f"next: {nxt}", next_safe_action=nxt)


def load(path: Path) -> Any:
    return json.loads(path.read_bytes())


def history(bundle: Bundle) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for day in sorted(paths.history_dir(bundle).glob("*.jsonl")):
        out += [json.loads(line) for line in day.read_text().splitlines() if line.strip()]
    return out


def receipt_ids(bundle: Bundle) -> set[str]:
    return {p.stem for p in paths.receipts_dir(bundle).glob("sr-*.json")}


def checks(receipt: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in receipt["gauntlet"]["checks"]}
