"""Demo section: one habit run in a private session, and its Arc receipt."""

from __future__ import annotations

import shlex
import sys

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step
from ouro.habits.schedule import due_report

_BODY = (
    "import os, subprocess, sys\n"
    "cli = [sys.executable, '-m', 'ouro.cli']\n"
    "orient = open(os.environ['OURO_ORIENT_FILE']).read()\n"
    "subprocess.run(cli + ['diary', 'write', 'the demo habit read %d characters of "
    "orientation' % len(orient)], check=True, capture_output=True)\n"
    "subprocess.run(cli + ['surface', '--to', 'originator', '--reason', 'status', "
    "'demo habit: one fact filed'], check=True, capture_output=True)\n"
)


def run(bundle: Bundle, step: Step, show: Show) -> None:
    bin_dir = bundle.habits / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "demo_body.py").write_text(_BODY, encoding="utf-8")
    definition = (
        "title: file a fact and report back\n"
        "cadence: '*/30 * * * *'\n"
        f"run: {shlex.quote(sys.executable)} habits/bin/demo_body.py\n"
        "timeout: 60\n"
        "tools: [diary_write, surface]\n"
        "origin: {friendId: ari, channel: imessage, key: thread-1}\n"
    )
    (bundle.habits / "report.yaml").write_text(definition, encoding="utf-8")
    step("a habit: habits/report.yaml", definition)
    due = due_report(bundle)
    step(
        "ouro habits due",
        "\n".join(
            f"{r['name']}: {'due now' if r['due'] else 'next due at ' + r['dueAt']}"
            for r in due["habits"]
        ),
    )
    receipt = Library(bundle).habits.run("report", trigger="manual")
    step(
        "ouro habits run report  (private session, thrown away afterwards)",
        f"outcome {receipt['outcome']} — derived from what changed, not from the body\n"
        f"granted tools: {', '.join(receipt['toolPolicy']['grantedTools'])}\n"
        f"receipt: {receipt['receiptLocator']}",
    )
    policy = receipt["toolPolicy"]
    produced = [r["locator"] for r in receipt["producedRefs"] if r["kind"] != "none"]
    step(
        f"the receipt: {receipt['receiptLocator']}",
        f"run {receipt['runId']} ({receipt['trigger']}): {receipt['outcome']}\n"
        f"tools granted {len(policy['grantedTools'])}, denied {len(policy['deniedTools'])}\n"
        f"produced: {', '.join(produced) or 'nothing'}\n"
        f"(the whole receipt: cat {bundle.path(receipt['receiptLocator'])})",
    )
    step(
        "ouro habits last report  (from the receipt + runtime state alone)",
        show(("habits", "last"), Library(bundle).habits.last("report")),
    )
