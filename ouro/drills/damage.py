"""Damage drills: broken files read as degraded or unknown, never as clear.

``truncate``: in one event day file a line is replaced by garbage and the
last line is cut mid-way (a torn tail); ``latest.json`` is cut in half. The
resume must come back degraded with each gap named (file and line), the
packet must show the gaps, the gauntlet must not say ready, nothing may raise,
and the reads must not rewrite a single file.

``unknown-not-zero``: the claim and obligation stores are made unreadable (each
folder replaced by a plain file, which defeats even root). The resume must say
the state is incomplete and name both stores as unknown; the packet must say
"unknown", never "none"; the gauntlet must fail the obligation checks rather
than call them not applicable.
"""

from __future__ import annotations

import os

from ouro.arc import paths
from ouro.arc.fold import day_files
from ouro.bundle import Bundle
from ouro.drills.harness import DrillAborted, Probe
from ouro.store.guard import Inside

GARBAGE = b'{"id": "ev-torn", "kind": tur'


def _files(bundle: Bundle) -> dict[str, tuple[bytes, int]]:
    out = {}
    inside = Inside(bundle.root)
    for dirpath, _dirs, names in os.walk(bundle.arc):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) and not inside.path(path):
                continue  # never opened: outside the bundle
            with open(path, "rb") as handle:
                out[path] = (handle.read(), os.stat(path).st_mtime_ns)
    return out


def truncate(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.arc import recorder, resume
    from ouro.sentinel.gauntlet import evaluate

    for kind, kw in (
        ("turn_accepted", {"current_ask": "drill: survive a truncated log"}),
        ("agent_note", {"next_safe_action": "drill: read the gaps"}),
        ("agent_note", {}),
    ):
        recorder.record_event(bundle, kind, "drill: truncate setup", **kw)  # type: ignore[arg-type]
    folder = paths.events_dir(bundle)
    name = day_files(folder)[-1]
    day = folder / name
    lines = day.read_bytes().split(b"\n")[:-1]
    if len(lines) < 3:
        raise DrillAborted(f"{name} has fewer than 3 lines after setup")
    bad_line = len(lines) - 1
    lines[bad_line - 1] = GARBAGE
    torn = lines[-1][: len(lines[-1]) // 2]
    day.write_bytes(b"\n".join([*lines[:-1], torn]))
    ckpt = paths.checkpoint_path(bundle)
    data = ckpt.read_bytes()
    ckpt.write_bytes(data[: len(data) // 2])

    before = _files(bundle)
    state = resume.read_resume(bundle)
    packet = orient.build_packet(bundle, budget=20_000)
    verdict = evaluate(bundle, orient.build_packet).gauntlet.verdict
    after = _files(bundle)

    recorder_state = state["recorder"]
    messages = " | ".join(i["message"] for i in recorder_state["issues"])
    codes = {i["code"] for i in recorder_state["issues"]}
    where = f"ouro arc resume --json  # recorder.issues; {paths.EVENTS_DIR}/{name}"
    probe.expect(
        recorder_state["health"] == "degraded",
        "the recorder reads as degraded",
        recorder_state["health"],
        look_at=where,
    )
    probe.expect(
        f"{name}:{bad_line}" in messages,
        f"the garbage line is named ({name}:{bad_line})",
        messages[:300],
        look_at=where,
    )
    probe.expect(
        "event_tail_torn" in codes,
        "the torn last line is named",
        ", ".join(sorted(codes)),
        look_at=where,
    )
    probe.expect(
        "checkpoint_malformed" in codes,
        "the cut checkpoint is named",
        ", ".join(sorted(codes)),
        look_at=paths.CHECKPOINT,
    )
    probe.expect(
        state["canContinue"] is False, "the resume does not allow continuing", look_at=where
    )
    probe.expect(
        f"{name}:{bad_line}" in packet.text and "event_tail_torn" in packet.text,
        "the orientation packet shows the named gaps",
        look_at="ouro orient",
    )
    probe.expect(
        verdict != "ready",
        "the gauntlet does not call a damaged recorder ready",
        verdict,
        look_at="ouro sentinel status",
    )
    probe.expect(
        before == after, "reading the damaged recorder rewrote no file", look_at=paths.EVENTS_DIR
    )


def unknown_not_zero(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.arc import resume
    from ouro.sentinel.gauntlet import evaluate

    for folder in (paths.claims_dir(bundle), paths.obligations_dir(bundle)):
        if folder.exists():
            os.rename(folder, folder.with_name(folder.name + ".drill-moved"))
        folder.write_text("drill: this store is unreadable\n", encoding="utf-8")

    state = resume.read_resume(bundle)
    missing = " | ".join(state["missing"])
    where = "ouro arc resume --json  # missing, recorder.issues"
    for label in ("claims", "obligations"):
        probe.expect(
            f"{label}: unknown" in missing,
            f"the resume names {label} as unknown",
            missing[:300],
            look_at=where,
        )
    probe.expect(
        state["completeState"] is False and state["canContinue"] is False,
        "the resume says the state is incomplete and cannot continue",
        look_at=where,
    )
    text = orient.build_packet(bundle, budget=20_000).text
    sections = _sections(text)
    for label in ("claims", "obligations"):
        body = sections.get(label, "")
        probe.expect(
            f"{label}: unknown" in body,
            f"the packet shows {label}: unknown",
            body[:200] or "(no section)",
            look_at="ouro orient",
        )
        probe.expect(
            "none" not in body and " 0 " not in f" {body} ",
            f"the packet never shows {label} as none or zero",
            body[:200],
            look_at="ouro orient",
        )
    checks = {c.id: c.status for c in evaluate(bundle, orient.build_packet).gauntlet.checks}
    for check in ("obligations_visible", "return_routes_visible"):
        probe.expect(
            checks[check] == "fail",
            f"the gauntlet fails {check} (unknown is not empty)",
            checks[check],
            look_at="ouro sentinel status",
        )


def _sections(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v) for k, v in out.items()}
