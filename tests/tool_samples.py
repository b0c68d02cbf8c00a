"""A valid sample call for every registered tool.

``prepare_samples(bundle)`` puts a bundle in a state where every sample is
valid and returns a context dict; a sample value may be a callable taking that
dict (for ids that only exist at run time). The MCP and CLI parity tests call
every tool with these, and a test fails when a registered tool has no sample.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from typing import Any

from ouro.bundle import Bundle

Sample = dict[str, Any | Callable[[dict[str, Any]], Any]]

SAMPLES: dict[str, Sample] = {
    "info": {},
    "orient": {"budget": 1200},
    # --- arc ---
    "arc_resume": {},
    "arc_query": {"what": "doing"},
    "arc_ask": {"text": "fix the login bug"},
    "arc_next": {"text": "run the tests", "stop_before": ["git push"]},
    "arc_confirm": {},
    "record_redact": {"locator": "desk/_record/notes/pasted.md", "match": "pw-sample-9f3k2"},
    "arc_blocker": {"text": "waiting for credentials"},
    "arc_unblock": {},
    "arc_handoff": {"text": "handing over to the next session"},
    "arc_note": {"text": "tests are slow today"},
    "arc_checkpoint": {},
    "claim_add": {"text": "the README names the test command", "about": ["bundle.json"]},
    "claim_evidence": {
        "claim_id": lambda ctx: ctx["arc_claim"],
        "command": "true",
        "exit_code": 0,
        "output": "ok",
    },
    "claim_verify": {"claim_id": lambda ctx: ctx["arc_claim"]},
    "claim_supersede": {
        "claim_id": lambda ctx: ctx["arc_claim_old"],
        "by": lambda ctx: ctx["arc_claim"],
    },
    "claim_update": {
        "claim_id": lambda ctx: ctx["arc_claim_typo"],
        "text": "bundle.json exists",
        "check": "test -f bundle.json",
    },
    "claim_list": {},
    "obligation_add": {"what": "reply to Ari", "to": "ari", "route": "slack:C01"},
    "obligation_close": {"obligation_id": lambda ctx: ctx["arc_obligation"]},
    "obligation_list": {},
    # --- desk: work and record ---
    "desk_track_add": {"name": "samples"},
    "desk_task_add": {"track": "samples", "title": "another task", "priority": 1},
    "desk_task_update": {"task": lambda ctx: ctx["desk_task"], "status": "blocked"},
    "desk_task_list": {"track": "samples"},
    "desk_ready": {"track": "samples"},
    "lock_take": {"paths": ["src/sample.py"], "reason": "sample", "agent": "sampler"},
    "lock_release": {"paths": [], "agent": "sampler"},
    "lock_list": {},
    "message_send": {"agent": "nobody", "text": "hello", "kind": "status"},
    "message_reply": {"message_id": lambda ctx: ctx["message"], "text": "hi"},
    "message_read": {},
    "message_list": {},
    "message_peer": {"agent": "nobody", "bundle": "/nonexistent/bundle"},
    "message_retry": {},
    "desk_task_show": {"task": lambda ctx: ctx["desk_task"]},
    "desk_task_take": {"task": lambda ctx: ctx["desk_task_take"], "agent": "sampler"},
    "desk_task_verify": {"task": lambda ctx: ctx["desk_task_checked"]},
    "desk_task_release": {"task": lambda ctx: ctx["desk_task_held"], "agent": "holder"},
    "desk_iteration_add": {"task": lambda ctx: ctx["desk_task"], "text": "tried the sample"},
    "desk_friction_add": {"title": "sample friction", "severity": "low"},
    "desk_friction_list": {},
    "desk_tip_add": {"title": "sample tip", "tags": ["sample"]},
    "desk_tip_list": {},
    "desk_feature": {"tracks": ["samples"]},
    "diary_write": {"text": "the release train leaves on fridays", "about": ["release"]},
    "diary_reflect": {"text": "a calm day of release work"},
    "notes_write": {"title": "release checklist", "body": "1. tag\n2. push\n", "tags": ["release"]},
    # --- desk: search ---
    "desk_search": {"query": "release"},
    "consult_diary": {"query": "release"},
    "search_facts": {"query": "release"},
    "consult_notes": {"query": "release"},
    # --- sentinel ---
    "sentinel_refresh": {
        "trigger": "post_turn",
        "signals": ['{"kind": "sense", "source": "inbox", "status": "ok"}'],
    },
    "sentinel_status": {},
    "drill": {"names": ["evidence-freshness"]},
    # --- habits ---
    "habits_list": {},
    "habits_run": {"name": "sample", "trigger": "poke"},
    "surface": {"to": "family", "reason": "status", "text": "nightly check ran"},
    "surface_list": {"all": True},
    "surface_ack": {"message_id": lambda c: c["surfaced"]},
}


def prepare_samples(bundle: Bundle) -> dict[str, Any]:
    ctx: dict[str, Any] = {"bundle": bundle}
    from ouro.arc.claims import add_claim
    from ouro.arc.obligations import add_obligation

    claim = add_claim(bundle, "bundle.json exists", about=["bundle.json"], check="true")
    ctx["arc_claim"] = claim["id"]
    ctx["arc_claim_old"] = add_claim(bundle, "an older claim")["id"]
    ctx["arc_claim_typo"] = add_claim(bundle, "bundle.json exsits", about=["bundle.json"])["id"]
    ctx["arc_obligation"] = add_obligation(bundle, "send the summary", owed_to="lead")["id"]
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / "sample.yaml").write_text(
        f"title: sample\ncadence: 1d\nrun: {shlex.quote(sys.executable)} -c pass\n"
    )
    from ouro.desk import leases as desk_leases
    from ouro.desk import tasks as desk_tasks
    from ouro.desk import tracks as desk_tracks

    desk_tracks.add_track(bundle, "samples")
    ctx["desk_task"] = desk_tasks.add_task(bundle, "samples", "sample task").id
    ctx["desk_task_take"] = desk_tasks.add_task(bundle, "samples", "take me").id
    ctx["desk_task_held"] = desk_tasks.add_task(bundle, "samples", "held task").id
    ctx["desk_task_checked"] = desk_tasks.add_task(
        bundle, "samples", "checked task", check="true"
    ).id
    desk_leases.take_task(bundle, ctx["desk_task_held"], agent="holder")
    from ouro import messages

    messages.set_peer(bundle, "self", str(bundle.root))
    sent = messages.send(bundle, "self", "a question", kind="question", sender="sampler")
    ctx["message"] = sent["message"]["id"]
    (bundle.root / "desk/_record/notes/pasted.md").write_text("# pasted\nlogin pw-sample-9f3k2\n")
    # a message a habit queued to the main line (ouro.habits.surface), for surface_ack
    ctx["surfaced"] = "ob-01sampledsurface0001"
    outbox = bundle.root / "arc" / "outbox"
    outbox.mkdir(parents=True, exist_ok=True)
    line = {"schemaVersion": 1, "id": ctx["surfaced"], "habitName": "sample", "text": "hi"}
    (outbox / "pending.jsonl").write_text(json.dumps(line) + "\n")
    return ctx


def resolve_sample(name: str, ctx: dict[str, Any]) -> dict[str, Any]:
    return {k: (v(ctx) if callable(v) else v) for k, v in SAMPLES[name].items()}
