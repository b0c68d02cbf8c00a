"""bundle.json is validated on open (issue 26, item 7).

Types and a known ``layoutVersion`` are checked by every entry -- the CLI
(every command, ``ouro.bundle``'s one discovery), the host hooks (a hook fails open with a one-line notice) and
the library. A newer layout is refused with "made by a newer ouro (layout N):
upgrade ouro"; a damaged or invalid file is reported with its path, the field
and the next step; the exit code is 3 (the bundle is unusable). The file is
never rewritten, but by ``ouro init PATH --repair``, which sets again only the
fields that are missing or invalid and keeps a backup of the old bytes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.errors import CorruptFile
from tests.conftest import REPO, run_ouro

#: what a user may find in bundle.json -> what the error must say
BAD: list[tuple[str, str]] = [
    ('{"agent": 5, "layoutVersion": 99}', "made by a newer ouro (layout 99): upgrade ouro"),
    ("{}", "field 'layoutVersion' is missing"),
    ('{"agent": 5, "layoutVersion": 2}', "field 'agent' must be a non-empty string, got 5"),
    ('{"agent": "  ", "layoutVersion": 2}', "field 'agent' must be a non-empty string"),
    ('{"layoutVersion": 2, "schemaVersion": 1}', "field 'agent' is missing"),
    ('{"agent": "a\\nb", "layoutVersion": 2}', "field 'agent' must be one line of printable"),
    ('{"agent": "a", "layoutVersion": 2, "schemaVersion": 99}', "(schemaVersion 99): upgrade"),
    ('{"agent": "a", "layoutVersion": 2, "schemaVersion": 0}', "field 'schemaVersion' is 0"),
    ('{"agent": "a", "layoutVersion": "2"}', "field 'layoutVersion' must be an integer, got '2'"),
    ('{"agent": "a", "layoutVersion": true}', "field 'layoutVersion' must be an integer"),
    ('{"agent": "a", "layoutVersion": 0}', "field 'layoutVersion' is 0: not a layout"),
    ('{"agent": "a", "layoutVersion": 2, "repoRoot": 7}', "field 'repoRoot' must be a string"),
    ('{"agent": "a", "layoutVersion": 2, "createdAt": []}', "field 'createdAt' must be a string"),
    ("[1, 2]", "must be a JSON object"),
    ('{"agent": "a", "layoutVersion": 2', "not valid JSON"),
]

#: every way in: the full CLI and each fast path
COMMANDS = [
    ["info"],
    ["info", "--json"],
    ["orient"],
    ["index", "status"],
    ["desk", "search", "x"],
    ["diary", "write", "a fact"],
    ["arc", "resume"],
    ["arc", "ask", "x"],
]


def _spoil(bundle: Bundle, text: str) -> bytes:
    bundle.meta_path.write_text(text)
    return bundle.meta_path.read_bytes()


@pytest.mark.parametrize(("text", "said"), BAD)
def test_every_command_refuses_a_bad_bundle_json(bundle: Bundle, text: str, said: str) -> None:
    data = _spoil(bundle, text)
    for args in COMMANDS:
        proc = run_ouro(*args, bundle=bundle)
        assert proc.returncode == 3, (args, proc.stdout, proc.stderr)
        said_all = proc.stderr + proc.stdout  # --json: the error object is on stdout
        assert str(bundle.meta_path) in said_all and said in said_all, (args, said_all)
        assert "hint" in said_all
        assert "agent:   5" not in proc.stdout and "layout:  v99" not in proc.stdout
    assert bundle.meta_path.read_bytes() == data  # never rewritten


def test_the_json_error_names_the_kind(bundle: Bundle) -> None:
    _spoil(bundle, '{"agent": 5, "layoutVersion": 99}')
    out = json.loads(run_ouro("info", "--json", bundle=bundle).stdout)
    assert out["error"]["type"] == "newer_layout" and out["error"]["exitCode"] == 3
    assert "upgrade" in out["error"]["hint"]
    _spoil(bundle, "{}")
    out = json.loads(run_ouro("info", "--json", bundle=bundle).stdout)
    assert out["error"]["type"] == "corrupt_file" and "--repair" in out["error"]["hint"]


def test_a_real_process_takes_the_fast_paths_and_refuses_alike(bundle: Bundle) -> None:
    _spoil(bundle, '{"agent": 5, "layoutVersion": 99}')
    for args in (["info"], ["orient"], ["index", "status"], ["desk", "search", "x"]):
        proc = run_ouro(*args, bundle=bundle, process=True)
        assert proc.returncode == 3, (args, proc.stderr)
        assert "made by a newer ouro (layout 99): upgrade ouro" in proc.stderr


@pytest.mark.parametrize("process", [False, True])
def test_a_hook_fails_open_with_a_one_line_notice(bundle: Bundle, process: bool) -> None:
    _spoil(bundle, '{"agent": 5, "layoutVersion": 99}')
    payload = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(bundle.root),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    proc = run_ouro("hook", "claude", "SessionStart", bundle=bundle, input=payload, process=process)
    assert proc.returncode == 0  # a hook never blocks the host on ouro's own trouble
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "made by a newer ouro (layout 99): upgrade ouro" in lines[0]
    assert "upgrade ouro" in json.loads(proc.stdout)["systemMessage"]


def test_the_library_refuses_on_open(bundle: Bundle) -> None:
    from ouro.errors import NewerLayout

    _spoil(bundle, '{"agent": "a", "layoutVersion": 3}')
    with pytest.raises(NewerLayout, match=r"made by a newer ouro \(layout 3\): upgrade ouro"):
        Bundle.open(bundle.root)
    with pytest.raises(NewerLayout):  # discovery too
        Bundle.locate(env={"OURO_BUNDLE": str(bundle.root)})
    _spoil(bundle, '{"agent": 5, "layoutVersion": 2}')
    with pytest.raises(CorruptFile, match="field 'agent'"):
        Bundle.open(bundle.root)


def test_migrate_never_rewrites_a_newer_layout_down(bundle: Bundle) -> None:
    data = _spoil(bundle, '{"agent": "a", "layoutVersion": 3}')
    (bundle.root / "journal").mkdir()  # even one that looks legacy
    proc = run_ouro("migrate", bundle=bundle)
    assert proc.returncode == 3 and "upgrade ouro" in proc.stderr
    assert bundle.meta_path.read_bytes() == data


def test_a_huge_bundle_json_is_refused_without_reading_it_whole(bundle: Bundle) -> None:
    with open(bundle.meta_path, "wb") as handle:
        handle.truncate(2_000_000_000)  # sparse: no disk used
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [
            "bash",
            "-c",
            f"ulimit -v 1500000 && exec {sys.executable} -m ouro.cli --bundle {bundle.root} info",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    assert "more than the limit of 1,000,000 bytes" in proc.stderr
    assert "MemoryError" not in proc.stderr


def test_a_valid_file_opens_and_the_shape_rules_agree(tmp_path: Path) -> None:
    from ouro.models import meta

    made = Bundle.init(tmp_path / "ok.ouro", agent="ari")
    data = json.loads(made.meta_path.read_text())
    assert meta.problem(data) is None and data["layoutVersion"] == meta.LAYOUT_VERSION
    assert Bundle.open(made.root).check_meta()["agent"] == "ari"
    extra = {**data, "settings": {"color": "never"}, "redact": {"literals": ["x"]}}
    assert meta.problem(extra) is None  # other sections belong to their readers
    assert run_ouro("info", bundle=made).returncode == 0


#: agent names init must refuse, as open would: (the --agent value, what the error says)
BAD_AGENTS: list[tuple[object, str]] = [
    ("   ", "agent: must be a non-empty string, got '   '"),
    ("", "agent: must be a non-empty string, got ''"),
    ("a\nb", "agent: must be one line of printable characters"),
    ("a\tb", "agent: must be one line of printable characters"),
    ("x" * 101, "agent: must be at most 100 characters, got 101"),
    (5, "agent: must be a non-empty string, got 5"),
]


@pytest.mark.parametrize(("agent", "said"), BAD_AGENTS)
def test_init_refuses_an_agent_open_would_refuse(tmp_path: Path, agent: object, said: str) -> None:
    from ouro.errors import InvalidInput
    from ouro.models import meta

    assert meta.problem({"layoutVersion": 2, "agent": agent}) is not None  # the same rule
    target = tmp_path / "deep" / "b.ouro"
    with pytest.raises(InvalidInput, match=re.escape(said)):
        Bundle.init(target, agent=agent)  # type: ignore[arg-type]
    assert not (tmp_path / "deep").exists()  # nothing written, no folder left behind
    if isinstance(agent, str):
        proc = run_ouro("init", str(target), "--agent", agent)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr
        assert not (tmp_path / "deep").exists()
    empty = tmp_path / "empty.ouro"
    empty.mkdir()
    with pytest.raises(InvalidInput, match="agent"):
        __import__("ouro").init(empty, agent=agent)
    assert list(empty.iterdir()) == []  # the folder that was there stays, empty


def test_init_takes_the_name_open_reads_and_refuses_a_bad_folder_name(tmp_path: Path) -> None:
    from ouro.errors import InvalidInput

    made = Bundle.init(tmp_path / "a.ouro", agent="  ada/ops:1  ")
    assert Bundle.open(made.root).check_meta()["agent"] == "ada/ops:1"  # '/' is allowed
    assert run_ouro("info", bundle=made).returncode == 0
    with pytest.raises(
        InvalidInput, match=re.escape("the folder name 'x\\tb.ouro' is not an agent name")
    ):
        Bundle.init(tmp_path / "x\tb.ouro")
    assert not (tmp_path / "x\tb.ouro").exists()


def test_a_bundle_json_without_an_agent_is_refused_alike(bundle: Bundle) -> None:
    data = json.loads(bundle.meta_path.read_text())
    del data["agent"]
    raw = _spoil(bundle, json.dumps(data))
    for args in (["info"], ["orient"], ["desk", "task", "take", "t-x"]):
        proc = run_ouro(*args, bundle=bundle)
        assert proc.returncode == 3, (args, proc.stdout, proc.stderr)
        assert f"{bundle.meta_path}: field 'agent' is missing" in proc.stderr
        assert "agent:   None" not in proc.stdout
    with pytest.raises(CorruptFile, match="field 'agent' is missing"):
        Bundle.open(bundle.root)
    assert bundle.meta_path.read_bytes() == raw


def test_config_set_agent_takes_the_same_rule(bundle: Bundle) -> None:
    before = bundle.meta_path.read_bytes()
    for bad in ("   ", "a\nb"):
        proc = run_ouro("config", "set", "agent", bad, bundle=bundle)
        assert proc.returncode == 2 and "agent: must be" in proc.stderr, proc.stderr
    assert bundle.meta_path.read_bytes() == before
    assert run_ouro("config", "set", "agent", "  ada  ", bundle=bundle).returncode == 0
    assert json.loads(bundle.meta_path.read_text())["agent"] == "ada"
    assert run_ouro("info", bundle=bundle).returncode == 0


# --- ouro init --repair ----------------------------------------------------------


@pytest.mark.parametrize(("text", "said"), [b for b in BAD if "upgrade" not in b[1]])
def test_repair_mends_what_open_refuses_and_keeps_the_rest(
    bundle: Bundle, text: str, said: str
) -> None:
    old = _spoil(bundle, text)
    proc = run_ouro("--json", "init", str(bundle.root), "--repair")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["repaired"] and out["changed"]
    assert (bundle.root / out["backup"]).read_bytes() == old  # the old bytes, kept
    assert run_ouro("orient", bundle=bundle).returncode == 0
    meta = json.loads(bundle.meta_path.read_text())
    try:
        before = json.loads(text)
    except ValueError:
        before = None
    if isinstance(before, dict):  # every valid field stays as it was
        for key in ("agent", "layoutVersion", "schemaVersion", "createdAt", "repoRoot"):
            if key in before and key not in out["changed"]:
                assert meta[key] == before[key], key
    assert meta["agent"] == (before.get("agent") if "agent" not in out["changed"] else "test")


def test_repair_takes_the_agent_named_and_leaves_a_valid_file_alone(bundle: Bundle) -> None:
    _spoil(bundle, '{"layoutVersion": 2, "createdAt": "2026-01-01T00:00:00Z"}')
    proc = run_ouro("init", str(bundle.root), "--repair", "--agent", "ada")
    assert proc.returncode == 0 and "set agent" in proc.stdout, proc.stderr
    valid = bundle.meta_path.read_bytes()
    assert json.loads(valid) == {
        "layoutVersion": 2,
        "createdAt": "2026-01-01T00:00:00Z",
        "agent": "ada",
    }
    backups = sorted((bundle.root / "state/backup").iterdir())
    proc = run_ouro("init", str(bundle.root), "--repair")
    assert proc.returncode == 0 and "nothing to repair" in proc.stdout
    assert bundle.meta_path.read_bytes() == valid
    assert sorted((bundle.root / "state/backup").iterdir()) == backups  # no new backup
    proc = run_ouro("init", str(bundle.root), "--repair", "--agent", "bob")
    assert proc.returncode == 2 and "already names the agent 'ada'" in proc.stderr
    assert bundle.meta_path.read_bytes() == valid


@pytest.mark.parametrize(
    "case", ["newer layout", "newer schema", "symlink", "legacy layout", "no bundle.json"]
)
def test_repair_refuses_what_it_must_not_rewrite(bundle: Bundle, tmp_path: Path, case: str) -> None:
    if case == "newer layout":
        _spoil(bundle, '{"layoutVersion": 99}')
    elif case == "newer schema":
        _spoil(bundle, '{"layoutVersion": 2, "schemaVersion": 99}')
    elif case == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_text("{}")
        bundle.meta_path.unlink()
        bundle.meta_path.symlink_to(target)
    elif case == "legacy layout":
        _spoil(bundle, "{}")
        (bundle.root / "journal").mkdir()
    else:
        bundle.meta_path.unlink()
    before = bundle.meta_path.read_bytes() if bundle.meta_path.exists() else None
    proc = run_ouro("init", str(bundle.root), "--repair")
    assert proc.returncode != 0 and "hint" in proc.stderr, proc.stdout
    after = bundle.meta_path.read_bytes() if bundle.meta_path.exists() else None
    assert after == before
    assert not (bundle.root / "state/backup").exists()
    if case == "symlink":
        assert (tmp_path / "elsewhere.json").read_text() == "{}"


def test_the_library_repairs_the_same_way(bundle: Bundle) -> None:
    import ouro

    _spoil(bundle, '{"layoutVersion": 2}')
    with pytest.raises(CorruptFile):
        ouro.open(bundle.root)
    opened = ouro.init(bundle.root, repair=True)
    assert json.loads(bundle.meta_path.read_text())["agent"] == "test"
    assert opened.folder.root == bundle.root
