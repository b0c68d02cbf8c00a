"""ouro init / info / discovery / legacy refusal / error shapes, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ouro.bundle import Bundle
from tests.conftest import REPO, ouro_json, run_ouro, snapshot

# The layout of DESIGN.md ("The bundle"), folders only.
EXPECTED_DIRS = {
    "arc",
    "arc/claims",
    "arc/flight-recorder",
    "arc/flight-recorder/context-loss-sentinel",
    "arc/flight-recorder/context-loss-sentinel/history",
    "arc/flight-recorder/context-loss-sentinel/receipts",
    "arc/flight-recorder/events",
    "arc/flight-recorder/habit-receipts",
    "arc/obligations",
    "arc/obligations/inner",
    "desk",
    "desk/_friction",
    "desk/_meta",
    "desk/_meta/tips",
    "desk/_record",
    "desk/_record/diary",
    "desk/_record/diary/daily",
    "desk/_record/notes",
    "habits",
    "state",
    "state/habits",
    "state/index",
    "state/sessions",
}
EXPECTED_FILES = {
    "bundle.json",
    ".gitignore",
    ".gitattributes",
    "desk/_meta/featured.md",
    "desk/_record/diary/facts.jsonl",
    "desk/_record/diary/entities.json",
    "desk/_record/notes/.index.json",
}


def _tree(root: Path) -> tuple[set[str], set[str]]:
    dirs, files = set(), set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        for d in dirnames:
            dirs.add((rel / d).as_posix())
        for f in filenames:
            if f != ".keep":
                files.add((rel / f).as_posix())
    return dirs, files


def test_init_creates_exactly_the_design_layout(tmp_path: Path) -> None:
    target = tmp_path / "ari.ouro"
    out = ouro_json("init", str(target))
    assert out == {
        "bundle": str(target),
        "created": True,
        "agent": "ari",
        "layoutVersion": 2,
        "pointer": None,
        "pointerWritten": False,
    }
    dirs, files = _tree(target)
    assert dirs == EXPECTED_DIRS
    assert files == EXPECTED_FILES
    for legacy in ("journal", "diary", "notes"):
        assert not (target / legacy).exists()
    meta = json.loads((target / "bundle.json").read_text())
    assert meta["layoutVersion"] == 2 and meta["agent"] == "ari" and meta["createdAt"].endswith("Z")


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "a.ouro"
    run_ouro("init", str(target), check=True)
    before = snapshot(target)
    proc = run_ouro("init", str(target), "--agent", "other")
    assert proc.returncode == 1
    assert "already an ouro bundle" in proc.stderr
    assert snapshot(target) == before
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "file.txt").write_text("mine")
    proc = run_ouro("init", str(busy))
    assert proc.returncode == 1 and "not an empty folder" in proc.stderr
    assert sorted(p.name for p in busy.iterdir()) == ["file.txt"]


def test_discovery_order(tmp_path: Path) -> None:
    a = Bundle.init(tmp_path / "a.ouro", agent="a")
    b = Bundle.init(tmp_path / "b.ouro", agent="b")
    deep = a.desk / "_meta"

    def info(cwd: Path, env: dict[str, str] | None = None, *extra: str) -> dict[str, str]:
        full = {k: v for k, v in os.environ.items() if k != "OURO_BUNDLE"}
        full.update(env or {})
        out = subprocess.run(
            [sys.executable, "-m", "ouro.cli", *extra, "info", "--json"],
            cwd=cwd,
            env=full,
            capture_output=True,
            text=True,
            check=True,
        )
        return dict(json.loads(out.stdout))

    assert info(deep)["agent"] == "a"
    assert info(deep, {"OURO_BUNDLE": str(b.root)})["agent"] == "b"
    assert info(deep, {"OURO_BUNDLE": str(b.root)}, "--bundle", str(a.root))["agent"] == "a"


def test_no_bundle_error_says_what_to_do(tmp_path: Path) -> None:
    proc = run_ouro("info")
    assert proc.returncode == 3
    assert "no ouro bundle found" in proc.stderr
    assert "ouro init" in proc.stderr
    proc = run_ouro("info", "--json")
    assert proc.returncode == 3
    err = json.loads(proc.stdout)["error"]
    assert set(err) == {"type", "message", "hint", "exitCode"} and err["exitCode"] == 3
    assert err["type"] == "bundle_not_found" and "ouro init" in err["hint"]


def test_legacy_bundle_is_refused_with_migrate_hint(bundle: Bundle) -> None:
    for legacy in ("journal", "diary", "notes"):
        (bundle.root / legacy).mkdir()
        proc = run_ouro("info", "--json", bundle=bundle)
        assert proc.returncode == 3
        err = json.loads(proc.stdout)["error"]
        assert err["type"] == "legacy_layout"
        assert f"{legacy}/" in err["message"]
        assert "ouro migrate" in err["hint"]
        (bundle.root / legacy).rmdir()


def test_usage_errors_exit_2_with_json_shape(bundle: Bundle) -> None:
    proc = run_ouro("no-such-command")
    assert proc.returncode == 2
    proc = run_ouro("--json", "no-such-command")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["type"] == "usage"


def test_info_reports_counts_and_is_pure(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    out = ouro_json("info", bundle=bundle)
    assert out["bundle"] == str(bundle.root)
    assert out["agent"] == "tester"
    assert out["layoutVersion"] == 2
    assert set(out["files"]) == {"arc", "desk", "habits", "state"}
    assert out["index"]["state"] in {"unknown", "missing"}
    assert snapshot(bundle.root) == before
    text = run_ouro("info", bundle=bundle, check=True).stdout
    assert "agent:   tester" in text


def test_ouro_debug_reraises(tmp_path: Path) -> None:
    proc = run_ouro("info", env={"OURO_DEBUG": "1"})
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "BundleNotFound" in proc.stderr


def test_demo_runs_on_a_given_path(
    tmp_path: Path, demo_output: subprocess.CompletedProcess[str]
) -> None:
    assert "ouro init" in demo_output.stdout
    target = Path(demo_output.args[-1])
    assert target.name == "demo.ouro"
    assert (target / "bundle.json").exists()
    out = ouro_json("demo", str(tmp_path / "demo2.ouro"))
    assert out["steps"][0]["title"] == "ouro init"
    # the demo's outside blocker is lifted again, so its drill ends on a ready receipt
    assert "(trigger drill, verdict ready)" in demo_output.stdout, demo_output.stdout[-800:]


def test_repo_layout_has_the_design_card_shape() -> None:
    for name in (
        "pyproject.toml",
        "ouro",
        "bundles",
        "templates",
        "migrations",
        "tests",
        "docs",
        "bench",
        ".ci/run",
        "README.md",
    ):
        assert (REPO / name).exists(), name
