"""Property: whatever sequence of Arc moments happened, the packet tells the truth.

Random sequences of ask / next / handoff / blocker / unblock / obligation add /
close (through the CLI verbs, in process) / obligation close *by editing its
file in place* / a host ``SessionStart(startup)`` (the real hook handler). After
each sequence the resume checkpoint and the orientation packet must agree with
a model computed from the files alone:

- the current ask: the newest event carrying ``currentAsk``;
- the next safe action: the newest event carrying ``nextSafeAction``, but only
  if it came with or after that ask (else none);
- the open obligations: the obligation files whose status is ``open``;
- the handoff: the newest ``handoff`` event, unless an event carrying a next
  safe action (other than ``ask_confirmed``) came after it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.orient import build_packet
from tests.conftest import cli_run

WORDS = st.text(alphabet="abcdefghij", min_size=1, max_size=8)
OPS = st.one_of(
    st.tuples(st.just("ask"), WORDS),
    st.tuples(st.just("next"), WORDS),
    st.tuples(st.just("handoff"), WORDS),
    st.tuples(st.just("blocker"), WORDS),
    st.tuples(st.just("unblock"), st.just("")),
    st.tuples(st.just("confirm"), st.just("")),
    st.tuples(st.just("ob_add"), WORDS),
    st.tuples(st.just("ob_close"), st.integers(0, 5)),
    st.tuples(st.just("ob_edit_close"), st.integers(0, 5)),
    st.tuples(st.just("session_start"), st.just("")),
)


def invoke(bundle: Bundle, *args: str) -> Any:
    result = cli_run(["--bundle", str(bundle.root), *args, "--json"])
    return json.loads(result.output) if result.exit_code == 0 else None


def apply(bundle: Bundle, op: str, arg: Any) -> None:
    if op in ("ask", "next", "handoff", "blocker"):
        invoke(bundle, "arc", op, f"{op} {arg}")
    elif op in ("unblock", "confirm"):
        invoke(bundle, "arc", op)  # refused (nothing to confirm) is fine
    elif op == "ob_add":
        invoke(bundle, "obligation", "add", f"owe {arg}", "--to", "lead")
    elif op in ("ob_close", "ob_edit_close"):
        files = sorted((bundle.root / "arc/obligations").glob("*.json"))
        opened = [p for p in files if orjson.loads(p.read_bytes()).get("status") == "open"]
        if not opened:
            return
        path = opened[arg % len(opened)]
        if op == "ob_close":
            invoke(bundle, "obligation", "close", path.stem)
        else:
            data = orjson.loads(path.read_bytes())
            data["status"] = "done"
            with open(path, "r+b") as handle:  # same inode: an editor saving in place
                handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
                handle.truncate()
    else:
        stdin = json.dumps({"session_id": "s1", "cwd": str(bundle.root), "source": "startup"})
        run_hook(CLAUDE, "SessionStart", stdin, bundle_path=None, env={}, handlers=HANDLERS)


def model(bundle: Bundle) -> dict[str, Any]:
    """What the files alone say, without the fold."""
    events: list[dict[str, Any]] = []
    for day in sorted((bundle.root / "arc/flight-recorder/events").glob("*.jsonl")):
        events += [orjson.loads(x) for x in day.read_bytes().splitlines() if x.strip()]
    ask = nxt = handoff = None
    ask_at = next_at = -1
    for i, ev in enumerate(events):
        if ev.get("currentAsk"):
            ask, ask_at = ev["currentAsk"], i
        if ev.get("nextSafeAction"):
            nxt, next_at = ev["nextSafeAction"], i
            if ev["kind"] not in ("handoff", "ask_confirmed"):
                handoff = None
        if ev["kind"] == "handoff":
            handoff = ev["summary"]
    opened = sorted(
        p.stem
        for p in (bundle.root / "arc/obligations").glob("*.json")
        if orjson.loads(p.read_bytes()).get("status") == "open"
    )
    return {
        "ask": ask,
        "next": nxt if nxt is not None and next_at >= ask_at else None,
        "obligations": opened,
        "handoff": handoff,
    }


def flat(text: str) -> str:
    return " ".join(text.split())


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(OPS, min_size=1, max_size=10))
def test_packet_equals_the_model_of_the_files(ops: list[tuple[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Bundle.init(Path(tmp) / "p.ouro", agent="prop")
        for op, arg in ops:
            apply(bundle, op, arg)
        want = model(bundle)
        r = read_resume(bundle)
        assert r["currentAsk"]["value"] == want["ask"]
        assert r["nextSafeAction"]["value"] == want["next"]
        assert (r["handoff"] or {}).get("value") == want["handoff"]
        assert r["activeObligationIds"] == want["obligations"]
        packet = build_packet(bundle, budget=20_000)
        text = flat(packet.text)
        if want["ask"]:
            assert f"] {want['ask']}" in text
        if want["next"]:
            assert f"## next safe action - {want['next']}" in text
        else:
            assert "## next safe action - unknown" in text
        if want["handoff"]:
            assert f"## handoff - {want['handoff']}" in text
        else:
            assert "## handoff" not in text
        listed = sorted(
            i.text.split(":")[0]
            for i in packet.items
            if i.section == "obligations" and i.text.startswith("ob-")
        )
        assert listed == want["obligations"]
