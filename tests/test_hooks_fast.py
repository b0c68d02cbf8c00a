"""Start-up speed of host hooks without changing what they do.

- ``ouro hook claude|codex EVENT`` runs through the one CLI path
  (``ouro.cli.run``) and its usage errors are the CLI's;
- the hook path for UserPromptSubmit, Stop and SessionEnd imports neither
  click nor pydantic (SessionStart/PreCompact: no click);
- ``ouro.arc.events.event_line`` builds an event line or refuses it naming
  the field;
- ``packet_context`` reads the bundle once and says what ``build_packet`` says.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouro.arc.claims import add_claim, verify_claim
from ouro.arc.events import EVENT_KINDS, event_line
from ouro.arc.obligations import add_obligation
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.hooks.common import clip
from ouro.hooks.packet import packet_context
from ouro.orient import agent_name, build_packet, collect_items, pack

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"

# Runs the real entry point and reports, at exit, which heavy packages got imported.
_PROBE = """
import atexit, sys
report = sys.argv[1]
def _report():
    heavy = sorted({m.split('.')[0] for m in sys.modules} & {'click', 'pydantic', 'yaml'})
    with open(report, 'w') as fh:
        fh.write(' '.join(heavy))
atexit.register(_report)
argv = sys.argv[2:]
sys.argv = ['ouro', *argv]
from ouro.cli import main
main(argv)
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}


def probe(
    tmp_path: Path, bundle: Bundle, host: str, event: str, *extra: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    data = json.loads((FIXTURES / host / f"{event}.json").read_text())
    data["cwd"] = str(bundle.root / "desk")
    report = tmp_path / f"modules-{host}-{event}.txt"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), "hook", host, event, *extra],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "nothing injected" not in proc.stderr, proc.stderr
    return proc, set(report.read_text().split())


def busy(bundle: Bundle) -> None:
    """Claims (one verified, watching a file), obligations, an ask: a real packet."""
    (bundle.root.parent / "src.txt").write_text("v1\n")
    verified = add_claim(bundle, "tests pass", about=["src.txt"], check="true")
    verify_claim(bundle, verified["id"])
    add_claim(bundle, "the cache is warm", check="test -f cache.db")
    add_obligation(bundle, "send the report", owed_to="ana", due="2020-01-01")
    record_event(bundle, "turn_accepted", "ask", current_ask="ship it", next_safe_action="test")


# --- the argument grammar -------------------------------------------------------


def test_a_bundle_option_naming_a_file_is_a_usage_error(tmp_path: Path) -> None:
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "hook", "claude", "Stop", "--bundle", str(afile)],
        input="{}",
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2
    assert "is a file" in proc.stderr
    assert proc.stdout == ""


def test_a_missing_event_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "hook", "claude"],
        input="{}",
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2
    assert "required: EVENT" in proc.stderr and "Usage: ouro hook claude" in proc.stderr


# --- what the fast path imports -------------------------------------------------------


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_hot_hook_events_import_neither_click_nor_pydantic(
    tmp_path: Path, bundle: Bundle, host: str
) -> None:
    busy(bundle)
    # No saved fingerprint yet: UserPromptSubmit injects the whole packet.
    proc, heavy = probe(tmp_path, bundle, host, "UserPromptSubmit")
    assert "hookSpecificOutput" in proc.stdout
    assert not heavy & {"click", "pydantic"}
    # Nothing changed since: silent, still light.
    proc, heavy = probe(tmp_path, bundle, host, "UserPromptSubmit")
    assert proc.stdout == ""
    assert not heavy & {"click", "pydantic"}
    proc, heavy = probe(tmp_path, bundle, host, "Stop")
    assert "not verified" in json.loads(proc.stdout)["systemMessage"]
    assert heavy == set()
    proc, heavy = probe(tmp_path, bundle, host, "SessionEnd")
    assert proc.stdout == ""
    assert heavy == set()


def test_session_start_and_pre_compact_skip_click(tmp_path: Path, bundle: Bundle) -> None:
    busy(bundle)
    proc, heavy = probe(tmp_path, bundle, "claude", "SessionStart")
    assert "# orient" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "click" not in heavy
    proc, heavy = probe(tmp_path, bundle, "claude", "PreCompact")
    assert proc.stdout == ""
    assert "click" not in heavy


def test_a_hook_fails_open_with_one_line_when_no_bundle_is_found(tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    data = json.loads((FIXTURES / "claude" / "Stop.json").read_text())
    data.update(cwd=str(nowhere), hook_event_name="SessionEnd")
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "hook", "codex", "SessionEnd"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
        cwd=nowhere,
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "no ouro bundle found" in proc.stderr


def test_block_on_debt_blocks_stop(bundle: Bundle) -> None:
    busy(bundle)
    data = json.loads((FIXTURES / "claude" / "Stop.json").read_text())
    data["cwd"] = str(bundle.root / "desk")
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "hook", "claude", "Stop", "--block-on-debt"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["decision"] == "block"


# --- event lines without the model ----------------------------------------------


def _raw(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "ev-1",
        "kind": "turn_accepted",
        "recorded_at": "2026-01-02T03:04:05.000000Z",
        "session_ref": None,
        "turn_id": None,
        "summary": "s",
        "current_ask": None,
        "next_safe_action": None,
        "stop_before": None,
        "blocked_because": None,
        "produced_refs": None,
        "meta": None,
    }
    return base | fields


def test_event_line_holds_the_fields_in_order() -> None:
    line = event_line(
        _raw(
            current_ask="a",
            stop_before=("x",),
            produced_refs=[{"kind": "note", "locator": "desk/_record/notes/a.md"}],
            meta={"host": "claude", "n": 1, "f": 0.5, "l": (1, {"a": []})},
        )
    )
    assert line == {
        "schemaVersion": 1,
        "id": "ev-1",
        "kind": "turn_accepted",
        "recordedAt": "2026-01-02T03:04:05.000000Z",
        "summary": "s",
        "currentAsk": "a",
        "stopBefore": ["x"],
        "producedRefs": [
            {"schemaVersion": 1, "kind": "note", "locator": "desk/_record/notes/a.md"}
        ],
        "meta": {"host": "claude", "n": 1, "f": 0.5, "l": [1, {"a": []}]},
        "sessionRef": None,
        "turnId": None,
    }
    assert list(line)[:2] == ["schemaVersion", "id"]
    assert list(event_line(_raw(session_ref="claude:1", turn_id="t")))[-1] == "summary"


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (_raw(kind="no_such_kind"), "event: kind: 'no_such_kind' is not an event kind"),
        (_raw(summary="a\x00b"), "event: summary: must not contain a NUL byte"),
        (_raw(summary=None), "event: summary: required: a string"),
        (_raw(current_ask=5), "event: current_ask: must be a string"),
        (_raw(stop_before=["a", 1]), "event: stop_before: must be a list of strings"),
        (
            _raw(produced_refs=[{"kind": "", "locator": "x"}]),
            "event: produced_refs.0.kind: must be a non-empty string",
        ),
        (
            _raw(produced_refs=[{"kind": "k", "locator": "x", "extra": 1}]),
            "event: produced_refs.0: must be an object with kind and locator",
        ),
        (_raw(meta={"f": math.inf}), "event: meta.f: inf is not a JSON number"),
        (_raw(meta={1: "int key"}), "event: meta: key 1 is not a string"),
        (_raw(meta={"p": Path("x")}), "event: meta.p: a PosixPath is not a JSON value"),
        (_raw(meta=[1]), "event: meta: must be an object"),
        (_raw(extra_field=1), "event: extra_field: unknown field"),
    ],
)
def test_event_line_refuses_naming_the_field(raw: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        event_line(raw)
    assert caught.value.message == said
    assert caught.value.hint == "kinds: see ouro.arc.events.EVENT_KINDS; text must not contain NUL"


def test_the_recorder_refuses_a_bad_event_and_writes_nothing(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="event: kind: 'no_such_kind' is not an event kind"):
        record_event(bundle, "no_such_kind", "s")
    assert not list((bundle.root / "arc" / "flight-recorder" / "events").glob("*.jsonl"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.tuples(inner)
    ),
    max_leaves=8,
)
_text = st.none() | st.text(max_size=6) | st.integers() | st.just("a\x00")


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from([*EVENT_KINDS, "nope"]),
    summary=_text,
    ask=_text,
    stop=st.none() | st.lists(st.text(max_size=3) | st.integers(), max_size=2),
    refs=st.none()
    | st.lists(st.dictionaries(st.sampled_from(["kind", "locator", "x"]), _text), max_size=2),
    meta=st.none() | _json,
)
def test_an_event_line_is_refused_or_is_json(
    kind: str, summary: Any, ask: Any, stop: Any, refs: Any, meta: Any
) -> None:
    raw = _raw(
        kind=kind, summary=summary, current_ask=ask, stop_before=stop, produced_refs=refs, meta=meta
    )
    try:
        line = event_line(raw)
    except InvalidInput as exc:
        assert exc.message.startswith("event: ")
        return
    assert json.loads(json.dumps(line, allow_nan=False)) == line  # exactly what JSON holds
    assert line["kind"] == kind and line["summary"] == summary and kind in EVENT_KINDS
    assert line.get("meta") is None or isinstance(meta, dict)


# --- one packet read for SessionStart ------------------------------------------


@pytest.mark.parametrize("budget", [300, 800, 2500])
def test_packet_context_is_build_packet_read_once(bundle: Bundle, budget: int) -> None:
    busy(bundle)
    for n in range(30):
        add_obligation(bundle, f"owed thing {n}", owed_to="bo")
    text, hashes = packet_context(bundle, budget=budget)
    assert text == clip(build_packet(bundle, budget).text, budget)
    packed = pack(collect_items(bundle), budget, agent=agent_name(bundle))
    assert packed == build_packet(bundle, budget)
    assert len(hashes) == len([i for i in collect_items(bundle) if i.section != "last event"])


# --- host receipts waiting for the transcript, on the fast path ------------------------


def _hook(
    tmp_path: Path, host: str, event: str, data: dict[str, Any], env: dict[str, str]
) -> set[str]:
    """``ouro hook HOST EVENT`` as the host runs it (the fast path); the heavy imports."""
    report = tmp_path / f"modules-{event}.txt"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), "hook", host, event],
        input=json.dumps(data | {"hook_event_name": event}), capture_output=True, text=True,
        env=_env() | env, timeout=120,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout.strip()[:1] in ("", "{")) == (0, True), proc.stderr
    assert "not recorded" not in proc.stderr and "not confirmed" not in proc.stderr, proc.stderr
    return set(report.read_text().split())


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SessionEnd"])
def test_a_hot_event_confirms_a_pending_host_receipt_and_stays_light_when_none_is_pending(
    tmp_path: Path, bundle: Bundle, event: str
) -> None:
    from ouro.arc.claims import describe, get_claim
    from tests.host_transcripts import HostSession

    s = HostSession("claude", tmp_path / "home", bundle.root.parent)
    claim = add_claim(bundle, "tests pass", check="pytest -q")
    s.call("pytest -q", "toolu_01Pending")
    kind, data = s.payload("pytest -q", "toolu_01Pending")
    _hook(tmp_path, "claude", kind, data | {"cwd": str(bundle.root.parent)}, s.env)
    assert (
        describe(bundle, get_claim(bundle, claim["id"]))["evidence"][-1]["provenance"] == "asserted"
    )
    s.result("toolu_01Pending", 0)  # the host's transcript catches up
    later = json.loads((FIXTURES / "claude" / f"{event}.json").read_text())
    later.update(session_id=s.session_id, transcript_path=str(s.path), cwd=str(bundle.root.parent))
    _hook(tmp_path, "claude", event, later, s.env)
    shown = describe(bundle, get_claim(bundle, claim["id"]))
    assert shown["status"] == "verified", shown["statusReason"]
    assert shown["evidence"][-1]["provenance"] == "observed-by-host"
    heavy = _hook(tmp_path, "claude", event, later, s.env)  # nothing pending now
    assert not heavy & {"click", "pydantic"}, heavy
