"""Drill ``secrets``: credentials written through every path stay out.

Seeds fake credentials of every shape in ``SHAPES`` (plus a literal listed in
the copy's ``bundle.json``) through every Arc write path (ask, next safe
action with stop-before, blocker, handoff, note, claim text and about, a
claim check (which must be refused: a check is never rewritten),
evidence command and output, obligation text, recipient and route), through a
sentinel refresh with a caller signal, and into Desk and the record (task
titles and bodies of a featured track, friction, a diary fact, a note), which
keep them as written. Then no file under ``arc/`` (events, checkpoint,
claims, obligations, receipts, ledger) and no render surface (the orientation
packet as text and JSON, the SessionStart injection, the UserPromptSubmit
changes, the Stop message, ``arc resume``) may contain any of them, and the
redaction markers must be there (proof the secrets did reach those paths).
The hooks' texts are read from real ``ouro hook claude …`` processes on the
copy, as a host would run them (the drills sit below the front ends, so they
never import one). The drill's own output is redacted by the harness.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import orjson

from ouro.bundle import Bundle
from ouro.drills.harness import CHILD_TIMEOUT, DrillAborted, Probe
from ouro.errors import InvalidInput
from ouro.models.ids import new_id
from ouro.store import jsonio
from ouro.store.guard import Inside

# Built from parts so this source file itself holds no credential-shaped string.
_TAIL = "Q7xZ2mK9pL4vR8sT1wY6nB3c"  # a fake high-entropy tail

#: kind -> (text as a user would type it, the secret part that must never appear)
SHAPES: dict[str, tuple[str, str]] = {
    "anthropic_key": ("key sk-" + "ant-api03-" + _TAIL, "sk-" + "ant-api03-" + _TAIL),
    "openai_key": ("sk-" + "proj-" + _TAIL + "AbCd", "sk-" + "proj-" + _TAIL + "AbCd"),
    "github_token": ("gh" + "p_" + _TAIL + "0123456789ab", "gh" + "p_" + _TAIL + "0123456789ab"),
    "github_pat": (
        "github" + "_pat_" + _TAIL + "_" + _TAIL,
        "github" + "_pat_" + _TAIL + "_" + _TAIL,
    ),
    "gitlab_token": ("glpat" + "-" + _TAIL, "glpat" + "-" + _TAIL),
    "slack_token": ("xox" + "b-123456789012-" + _TAIL, "xox" + "b-123456789012-" + _TAIL),
    "aws_access_key": ("AK" + "IA" + "QWERTYUIOPASDFGH", "AK" + "IA" + "QWERTYUIOPASDFGH"),
    "aws_secret": (
        "aws_secret_access_key=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKY",
    ),
    "google_api_key": ("AI" + "za" + _TAIL + "0123456789a", "AI" + "za" + _TAIL + "0123456789a"),
    "stripe_key": ("sk" + "_live_" + _TAIL, "sk" + "_live_" + _TAIL),
    "npm_token": ("npm" + "_" + _TAIL + "abcdefghijkl", "npm" + "_" + _TAIL + "abcdefghijkl"),
    "huggingface_token": ("hf" + "_" + _TAIL + "abcdefghij", "hf" + "_" + _TAIL + "abcdefghij"),
    "sendgrid_key": ("SG" + "." + _TAIL + "." + _TAIL + _TAIL, _TAIL + "." + _TAIL + _TAIL),
    "bearer_token": ("Authorization: Bearer " + "opaque" + _TAIL, "opaque" + _TAIL),
    "basic_auth": (
        "Authorization: Basic " + "ZGVwbG95OmNvcnJlY3QtaG9yc2U=",
        "ZGVwbG95OmNvcnJlY3QtaG9yc2U=",
    ),
    "curl_user": ("curl -u deploy:" + "Horse" + _TAIL[:8] + " https://x", "Horse" + _TAIL[:8]),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJib2IifQ." + "sig" + _TAIL,
        "eyJzdWIiOiJib2IifQ." + "sig" + _TAIL,
    ),
    "url_password": (
        "https://drill:" + "hunter2" + _TAIL[:6] + "@db.example.com/x",
        "hunter2" + _TAIL[:6],
    ),
    "url_token": ("https://x.example/cb?access_token=" + "tok" + _TAIL + "&page=2", "tok" + _TAIL),
    "private_key": (
        "-----BEGIN "
        + "RSA PRIVATE KEY-----\nMIIEv"
        + _TAIL
        + "\n-----END "
        + "RSA PRIVATE KEY-----",
        "MIIEv" + _TAIL,
    ),
    "password_assign": ("password=" + "Zebra" + _TAIL[:10], "Zebra" + _TAIL[:10]),
    "password_quoted": (
        'password: "correct ' + "horse battery " + _TAIL[:5] + '"',
        "horse battery " + _TAIL[:5],
    ),
    "password_json": ('{"db_password": "p4ss ' + "word " + _TAIL[:6] + '"}', "word " + _TAIL[:6]),
    "api_key_colon": ("api_key: " + "k3y" + _TAIL, "k3y" + _TAIL),
    "token_assign": ("token=" + "t0k" + _TAIL[:12], "t0k" + _TAIL[:12]),
    "client_secret": ("client_secret=" + "cs" + _TAIL[:14], "cs" + _TAIL[:14]),
    "env_export": ("export SERVICE_TOKEN=" + "svc" + _TAIL[:9], "svc" + _TAIL[:9]),
    "cli_flag": ("deploy --password " + "Flag" + _TAIL[:9], "Flag" + _TAIL[:9]),
    "azure_account_key": ("AccountName=x;AccountKey=" + "Az" + _TAIL + "==;", "Az" + _TAIL),
}


def seeds(literal: str) -> dict[str, str]:
    """kind -> the text as typed (every shape, plus a literal listed in bundle.json)."""
    return {**{kind: typed for kind, (typed, _needle) in SHAPES.items()}, "literal": literal}


def _needles(seeded: dict[str, str]) -> dict[str, str]:
    """The part of each seed that must never show (for a URL: its password)."""
    return {
        **{kind: needle for kind, (_typed, needle) in SHAPES.items()},
        "literal": seeded["literal"],
    }


def _add_literal(bundle: Bundle, literal: str) -> None:
    meta = jsonio.loads(bundle.meta_path.read_bytes())
    section = meta.setdefault("redact", {})
    section["literals"] = [*section.get("literals", []), literal]
    bundle.meta_path.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))


def _write_everything(bundle: Bundle, blob: str) -> None:
    from ouro.arc import claims, obligations, recorder
    from ouro.orient import build_packet
    from ouro.sentinel.receipts import refresh
    from ouro.sentinel.signals import parse_caller_signal

    recorder.record_event(bundle, "turn_accepted", f"ask {blob}", current_ask=f"ask {blob}")
    recorder.record_event(
        bundle,
        "agent_note",
        f"next {blob}",
        next_safe_action=f"next {blob}",
        stop_before=[f"stop {blob}"],
        meta={"note": blob, blob: "key"},
        produced_refs=[{"kind": "note", "locator": "desk/_meta/featured.md"}],
    )
    recorder.record_event(bundle, "blocker_detected", f"blocked {blob}", blocked_because=blob)
    recorder.record_event(bundle, "handoff", f"handoff {blob}", session_ref=f"s {blob}")
    recorder.record_event(bundle, "agent_note", f"note {blob}", turn_id=f"t {blob}")
    try:  # a check holding a secret is refused, never rewritten (ouro.proof.checkrun)
        claims.add_claim(bundle, f"refused {blob}", check=f"check {blob}")
    except InvalidInput:
        pass
    else:
        raise RuntimeError("a claim check holding credentials was accepted, not refused")
    claim = claims.add_claim(
        bundle,
        f"claim {blob}",
        about=["desk/_meta/featured.md"],
        authority="test",
        check="true",
    )
    claims.add_evidence(
        bundle,
        claim["id"],
        command=f"run {blob}",
        exit_code=0,
        output=f"output {blob}",
        note=f"note {blob}",
    )
    obligations.add_obligation(
        bundle, f"owe {blob}", owed_to=f"friend {blob}", route=f"email:{blob.splitlines()[0]}"
    )
    signal = parse_caller_signal(
        {
            "kind": "provider_lane",
            "source": "drill",
            "status": "down",
            "detail": blob,
            "repairCommand": f"export KEY={blob}",
        },
        index=0,
    )
    refresh(bundle, orient=build_packet, trigger="drill", signals=[signal])


def _chunks(texts: list[str], limit: int) -> list[str]:
    """Join single-line texts into titles of at most ``limit`` characters."""
    out: list[str] = []
    for text in texts:
        if out and len(out[-1]) + 3 + len(text) <= limit:
            out[-1] += " | " + text
        else:
            out.append(text[:limit])
    return out


def _write_desk(bundle: Bundle, seeded: dict[str, str], blob: str) -> None:
    """Secrets typed into Desk and the record: kept as written, never rendered."""
    from ouro.desk.featured import feature
    from ouro.desk.friction import add_friction
    from ouro.desk.notes import write_note
    from ouro.desk.record import FactDraft, write_fact
    from ouro.desk.tasks import add_task
    from ouro.desk.tracks import add_track

    track = add_track(bundle, "drill secrets " + new_id("x")[-6:]).name
    single = [text for text in seeded.values() if "\n" not in text]
    for title in _chunks([f"task {t}" for t in single], 190)[:15]:
        add_task(bundle, track, title, body=blob)
    feature(bundle, tracks=[track], tasks=[])
    for title in _chunks(single, 190)[-5:]:
        add_friction(bundle, title, body=blob)
    write_fact(bundle, FactDraft(text=f"fact {blob}"))
    write_note(bundle, "drill secrets note", f"note {blob}\n")


#: the session the drill's hook processes speak for: opened before the seeds, so
#: its UserPromptSubmit afterwards shows every seeded item as a change
SESSION = "drill-secrets"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def hook_output(bundle: Bundle, event: str, *, session_id: str = SESSION) -> str:
    """What a real ``ouro hook claude EVENT`` process shows the agent for this bundle:
    every text of its JSON reply (decoded, so nothing hides behind an escape), and
    its stderr. A real process: the drill checks the front end as the host runs it."""
    fields: dict[str, Any] = {
        "session_id": session_id,
        "cwd": str(bundle.root),
        "hook_event_name": event,
    }
    if event == "SessionStart":
        fields["source"] = "startup"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OURO_")}
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ouro.cli",
                "--bundle",
                str(bundle.root),
                "hook",
                "claude",
                event,
            ],
            input=orjson.dumps(fields).decode(),
            capture_output=True,
            text=True,
            env=env,
            cwd=bundle.root,
            timeout=CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise DrillAborted(
            f"ouro hook claude {event} did not answer in {CHILD_TIMEOUT:.0f} s"
        ) from None
    if proc.returncode != 0:
        raise DrillAborted(
            f"ouro hook claude {event} exited {proc.returncode}: {proc.stderr.strip()[-400:]}"
        )
    try:
        texts = _strings(orjson.loads(proc.stdout)) if proc.stdout.strip() else []
    except orjson.JSONDecodeError:
        texts = [proc.stdout]
    return "\n".join([*texts, proc.stderr])


def surfaces(bundle: Bundle) -> dict[str, str]:
    """Every text ouro renders from this bundle for an agent: packet, hooks, resume.
    The hooks' texts come from real hook processes (``hook_output``); the drill's
    session must have started (SessionStart) before the seeds went in."""
    from ouro import orient
    from ouro.arc.resume import read_resume

    resume = read_resume(bundle)
    return {
        "orientation packet": orient.build_packet(bundle, budget=20_000).text,
        "packet items (JSON)": orjson.dumps(
            orient.build_packet(bundle, budget=20_000).to_json()
        ).decode(),
        "SessionStart injection": hook_output(bundle, "SessionStart", session_id=SESSION + "-2"),
        "UserPromptSubmit changes": hook_output(bundle, "UserPromptSubmit"),
        "Stop message": hook_output(bundle, "Stop"),
        # (its text for people, ouro.cli.render.arc.resume, shows these same fields)
        "arc resume": orjson.dumps(resume).decode(),
    }


def run(bundle: Bundle, probe: Probe) -> None:
    hook_output(bundle, "SessionStart")  # the session whose next prompt sees the seeds
    literal = "drill-literal-" + new_id("x")
    _add_literal(bundle, literal)
    seeded = seeds(literal)
    blob = " | ".join(seeded.values())
    _write_everything(bundle, blob)
    _write_desk(bundle, seeded, blob)
    needles = _needles(seeded)
    leaks: dict[str, list[str]] = {}
    markers = 0
    inside = Inside(bundle.root)
    for dirpath, _dirs, names in os.walk(bundle.arc):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) and not inside.path(path):
                continue  # never opened: outside the bundle
            with open(path, "rb") as handle:
                data = handle.read().decode("utf-8", "replace")
            markers += data.count("[redacted:")
            rel = os.path.relpath(path, bundle.root)
            for kind, needle in needles.items():
                if needle in data:
                    leaks.setdefault(kind, []).append(rel)
    rendered = surfaces(bundle)
    for kind, needle in needles.items():
        files = leaks.get(kind, [])
        probe.expect(
            not files,
            f"no {kind} in any file under arc/",
            ", ".join(sorted(files)[:4]),
            look_at=(sorted(files) or ["arc/"])[0],
        )
        shown = sorted(name for name, text in rendered.items() if needle in text)
        probe.expect(
            not shown,
            f"no {kind} on any render surface",
            ", ".join(shown),
            look_at="ouro orient",
        )
    probe.expect(
        markers > 0,
        "redaction markers show the secrets reached the write paths",
        f"{markers} marker(s)",
        look_at="arc/",
    )
    probe.expect(
        "[redacted:" in rendered["orientation packet"],
        "Desk secrets reached the packet only as redaction markers",
        look_at="ouro orient",
    )
    for surface in ("SessionStart injection", "UserPromptSubmit changes"):
        probe.expect(
            "[redacted:" in rendered[surface],
            f"the seeded ask reached the {surface} only as redaction markers",
            rendered[surface][:200],
            look_at="ouro hook claude " + surface.split()[0] + " --dry-run",
        )
