"""A realistic bundle for the workbench tests: the demo bundle after a session.

``realistic_bundle(path)`` runs ``ouro demo`` into ``path``, then a session
through the real CLI (in process, click's runner): a second session confirms
a new ask and next action, records an unverified claim, corrects a fact
(a supersede chain), writes a Markdown note and a reflection, hands off (the
ask turns stale_risky), meets a blocker, and refreshes the sentinel, which blocks with a
failing check and its repair command.

Secrets are seeded where ouro does not redact on write: a hand-edited note, a
raw fact line, a task body, and a literal added to ``bundle.json`` after the
fact. ``SECRETS`` lists them; no page may contain any.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.demo import run_demo
from tests.conftest import cli_run

LITERAL = "corp-literal-7f3a9c"
ANTHROPIC = "sk-ant-api03-" + "Zx9" * 12
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
PASSWORD = "tr0ub4dor-horse"
SECRETS = (LITERAL, ANTHROPIC, GITHUB, PASSWORD)

NOTE_BODY = """# Token migration runbook

1. Copy the `tokens` table to **tokens_v2**.
2. Switch reads, then writes.

| step | owner |
|---|---|
| copy | agent |
| switch | human |

<script>alert("raw html must not run")</script>

[a bad link](javascript:alert(1)) and [the docs](https://example.org/docs).

The staging key is {anthropic} and the vault literal is {literal}.
"""


def ouro(root: Path, *args: str) -> Any:
    result = cli_run(["--bundle", str(root), "--json", *args])
    # a negative outcome (exit 1: a blocked verdict, a failed check) still prints its result
    assert result.exit_code in (0, 1) and '"error"' not in result.output[:9], (
        f"ouro {' '.join(args)}: {result.output}"
    )
    return json.loads(result.output) if result.output.strip() else None


def realistic_bundle(root: Path) -> Bundle:
    run_demo(root, echo=None)
    s = "sess-2026-11-30-b"
    ouro(root, "arc", "ask", "migrate the auth tokens to the new table", "--session", s)
    ouro(root, "arc", "next", "copy the tokens table, then compare row counts",
         "--stop-before", "switching production reads", "--session", s)  # fmt: skip
    claim = ouro(root, "claim", "add", "the tokens table copy has the same row count",
                 "--authority", "agent", "--check", "python3 -c 'raise SystemExit(0)'")  # fmt: skip
    first = ouro(root, "diary", "write", "tokens live in the auth_tokens table", "--about", "auth",
                 "--source", "schema dump", "--trust", "verified")  # fmt: skip
    ouro(root, "diary", "write", "tokens moved to the tokens_v2 table", "--about", "auth",
         "--source", "migration log", "--supersedes", _fact_id(first), "--force")  # fmt: skip
    ouro(root, "diary", "reflect", "The copy went smoothly; **row counts** still unchecked.")
    note = root.parent / "runbook.md"
    note.write_text(NOTE_BODY.format(anthropic="[seeded later]", literal="[seeded later]"))
    ouro(root, "notes", "write", "Token migration runbook", "--body-file", str(note),
         "--tag", "auth")  # fmt: skip
    ouro(root, "desk", "track", "add", "auth migration")
    task = ouro(root, "desk", "task", "add", "auth-migration", "Copy the tokens table",
                "--priority", "1", "--acceptance", "row counts match")  # fmt: skip
    task_id = task.get("task", task)["id"]
    ouro(root, "desk", "task", "update", task_id, "--status", "active")
    ouro(root, "desk", "iteration", "add", task_id, "copied 1.2M rows in 4 batches")
    ouro(root, "desk", "task", "add", "auth-migration", "Switch production reads",
         "--priority", "2")  # fmt: skip
    ouro(root, "desk", "friction", "add", "the copy script has no dry-run flag",
         "--severity", "medium", "--track", "auth-migration")  # fmt: skip
    ouro(root, "desk", "tip", "add", "compare row counts before switching reads",
         "--tag", "migration")  # fmt: skip
    ouro(root, "arc", "handoff", "auth migration half done: tokens copied, reads not switched",
         "--session", s)  # fmt: skip
    ouro(root, "arc", "blocker", "waiting for a DBA to grant ALTER on auth_tokens", "--session", s)
    ouro(root, "sentinel", "refresh", "--trigger", "post_turn")
    _seed_secrets(root)
    assert claim
    return Bundle.open(root)


def _fact_id(written: Any) -> str:
    fact = written.get("fact", written)
    return str(fact["id"])


def _seed_secrets(root: Path) -> None:
    """Secrets written around ouro (by hand), where no write-time redaction ran."""
    note = root / "desk" / "_record" / "notes" / "token-migration-runbook.md"
    text = note.read_text()
    note.write_text(text.replace("[seeded later]", ANTHROPIC, 1).replace("[seeded later]", LITERAL))
    facts = root / "desk" / "_record" / "diary" / "facts.jsonl"
    line = {
        "schemaVersion": 1,
        "id": "f-01m8zzzzzzzzzzzzzz",
        "text": f"the CI token is {GITHUB} and the db password={PASSWORD}",
        "about": ["ci"],
        "source": "pasted by hand",
        "createdAt": "2026-11-30T12:00:00.000Z",
        "provenance": {"tool": "hand", "trust": "told"},
        "hash": "sha256:" + "0" * 64,
    }
    with facts.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    task = next((root / "desk").glob("*/*/task.md"))
    task.write_text(task.read_text() + f"\nstaging password: {PASSWORD}\n")
    meta = json.loads((root / "bundle.json").read_text())
    meta["redact"] = {"literals": [LITERAL]}
    (root / "bundle.json").write_text(json.dumps(meta, indent=2) + "\n")
