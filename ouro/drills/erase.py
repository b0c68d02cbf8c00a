"""Drill ``erase``: a wiped agent resumes from the bundle alone.

The truth is derived straight from the files, independently of the fold: the
last ``currentAsk`` in the event log and the last ``nextSafeAction`` — which
is current only when it was recorded with or after that ask (a next recorded
for an older ask is not) — the Desk locators they name (``meta.deskRefs``),
every obligation file whose status is open, and every claim whose derived
status is not verified or superseded. Then everything derived is wiped (the
checkpoint, ``state/index``, session scratch) and the orientation packet is
built from the bundle alone. It must name the same ask and next safe action,
and every open obligation and unverified claim, either shown or counted in the
section's "+N more" pointer; it must name nothing that is not true. The drill
fails when the next safe action belongs to an older ask (a fresh agent would
have nothing current to do) or a Desk locator the ask or next names does not
resolve.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

from ouro.arc import paths
from ouro.arc.claims import list_claims
from ouro.arc.fold import day_files
from ouro.bundle import Bundle
from ouro.drills.harness import DrillAborted, Probe
from ouro.store import jsonio
from ouro.store.guard import names_inside
from ouro.store.jsonl import read_jsonl

_ID = re.compile(r"\b(ob|cl)-[0-9a-hjkmnp-tv-z]{18}\b")


def _refs(rec: dict[str, Any]) -> list[str]:
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    refs = meta.get("deskRefs") if meta else None
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def _last_values(bundle: Bundle) -> dict[str, Any]:
    """The last ask and next in the log, in order, and whether the next serves the ask."""
    ask = nxt = None
    ask_at = next_at = -1
    refs: list[str] = []
    next_refs: list[str] = []
    folder = paths.events_dir(bundle)
    position = 0
    for name in day_files(folder):
        for rec in read_jsonl(folder / name).records:
            position += 1
            if isinstance(rec.get("currentAsk"), str) and rec["currentAsk"]:
                ask, ask_at, refs = rec["currentAsk"], position, _refs(rec)
            if isinstance(rec.get("nextSafeAction"), str) and rec["nextSafeAction"]:
                nxt, next_at, next_refs = rec["nextSafeAction"], position, _refs(rec)
    current = nxt is not None and next_at >= ask_at
    return {
        "ask": ask,
        "next": nxt if current else None,
        "older_next": nxt if nxt is not None and not current else None,
        "refs": refs + (next_refs if current else []),
    }


def _json(name: str) -> bool:
    return name.endswith(".json")


def _open_obligations(bundle: Bundle) -> set[str]:
    out: set[str] = set()
    for folder in (paths.obligations_dir(bundle), paths.inner_dir(bundle)):
        if not folder.is_dir():
            continue
        # none behind a symlink leading outside the bundle: never opened
        for path in [folder / n for n in names_inside(folder, _json, None)]:
            try:
                data = jsonio.loads(path.read_bytes())
            except (OSError, jsonio.JSONDecodeError) as exc:
                raise DrillAborted(f"{path.name} is unreadable ({exc}); fix it first") from None
            if isinstance(data, dict) and data.get("status") == "open":
                out.add(str(data.get("id")))
    return out


def truth(bundle: Bundle) -> dict[str, Any]:
    log = _last_values(bundle)
    listed = list_claims(bundle)
    if listed.get("claims") is None:
        raise DrillAborted(f"claims store unreadable: {listed.get('unknown')}")
    unverified = {
        c["id"] for c in listed["claims"] if c["status"] not in ("verified", "superseded")
    }
    return {**log, "obligations": _open_obligations(bundle), "claims": unverified}


def _flat(text: str | None, limit: int = 60) -> str:
    return " ".join((text or "").split())[:limit]


def wipe(bundle: Bundle) -> None:
    """Remove everything derived or private: what a context wipe may leave missing."""
    paths.checkpoint_path(bundle).unlink(missing_ok=True)
    for sub in ("state/index", "state/sessions"):
        shutil.rmtree(bundle.root / sub, ignore_errors=True)


def _covered(probe: Probe, label: str, expected: set[str], shown: set[str], dropped: int) -> None:
    missing = expected - shown
    probe.expect(
        len(missing) <= dropped,
        f"every open {label} is named or counted in '+N more'",
        f"{len(missing)} not shown, {dropped} counted: {', '.join(sorted(missing)[:5])}",
        look_at="ouro orient --json",
    )
    extra = shown - expected
    probe.expect(
        not extra,
        f"the packet names no {label} that is not open",
        ", ".join(sorted(extra)[:5]),
        look_at="ouro orient --json",
    )


def run(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient

    before = truth(bundle)
    wipe(bundle)
    packet = orient.build_packet(bundle)
    text = packet.text
    for key, label, section in (
        ("ask", "current ask", "ask"),
        ("next", "next safe action", "next safe action"),
    ):
        value = before[key]
        if value is None:
            lines = [i.text for i in packet.items if i.section == section]
            probe.expect(
                any(line.startswith(("unknown", "[unknown]")) for line in lines),
                f"the packet says the {label} is unknown, as the files do",
                look_at="ouro orient",
            )
        else:
            probe.expect(
                _flat(value) in " ".join(text.split()),
                f"the packet names the {label} from the log",
                f"expected {_flat(value)!r}",
                look_at=f"ouro orient  # section '{section}'",
            )

    older = before["older_next"]
    probe.expect(
        older is None,
        "the next safe action serves the current ask",
        f"the last one ({_flat(older)!r}) was recorded for an older ask" if older else "",
        look_at="ouro arc next TEXT  # the next safe action for the current ask",
    )
    if older is not None:
        nxt_lines = [i.text for i in packet.items if i.section == "next safe action"]
        probe.expect(
            all("previous ask" in line for line in nxt_lines if _flat(older, 40) in line),
            "the packet shows the older ask's next only as 'from the previous ask'",
            look_at="ouro orient  # section 'next safe action'",
        )
    from ouro.arc.desklinks import locator_problem

    for ref in before["refs"]:
        why = locator_problem(bundle, ref)
        probe.expect(
            why is None,
            f"the Desk locator {ref} named by the ask/next resolves",
            why or "",
            look_at=ref,
        )

    def named(section: str, prefix: str) -> set[str]:
        found = set()
        for item in packet.items:
            if item.section == section:
                found |= {m.group(0) for m in _ID.finditer(item.text) if m.group(1) == prefix}
        return found

    _covered(
        probe,
        "obligation",
        before["obligations"],
        named("obligations", "ob"),
        packet.dropped.get("obligations", 0),
    )
    _covered(
        probe,
        "unverified claim",
        before["claims"],
        named("claims", "cl"),
        packet.dropped.get("claims", 0),
    )
