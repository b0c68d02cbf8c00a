"""docs/python-api.md: every ```python block runs, in order, on a new bundle; and
docs/examples/agent_loop.py drives its loop to the end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "python-api.md"
LOOP = ROOT / "docs" / "examples" / "agent_loop.py"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_examples() -> None:
    assert len(blocks()) >= 6


def test_every_example_runs_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OURO_BUNDLE", raising=False)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"folder": tmp_path, "__name__": "python_api_doc"}
    for n, code in enumerate(blocks(), 1):
        try:
            exec(compile(code, f"{DOC.name} block {n}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"block {n} of {DOC.name} failed: {exc!r}\n{code}") from exc


def test_every_namespace_in_the_table_exists(tmp_path: Path) -> None:
    import ouro
    from ouro.spec import is_verb

    b = ouro.init(tmp_path / "t.ouro")
    rows = re.findall(r"^\| `(b[.\w]*)` \| (.*) \|$", DOC.read_text(encoding="utf-8"), re.M)
    assert len(rows) >= 10
    for name, verbs in rows:
        owner: object = b
        for part in name.split(".")[1:]:
            owner = getattr(owner, part)
        for verb in re.findall(r"`([\w./]+)", verbs):
            if verb.startswith("b."):  # b.desk.task.add/update/...
                *path, last = verb.split(".")[1:]
                target: object = b
                for part in path:
                    target = getattr(target, part)
                for leaf in last.split("/"):
                    assert is_verb(getattr(target, leaf)), f"{verb}: {leaf}"
            else:
                assert is_verb(getattr(owner, verb)), f"{name}.{verb}"


def test_the_agent_loop_example_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(LOOP), str(tmp_path / "loop.ouro")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "done: Tidy the README, Pin the test runner" in proc.stdout
    import ouro

    b = ouro.open(tmp_path / "loop.ouro")
    tasks = b.desk.task.list(track="chores")["tasks"]
    assert [t["status"] for t in tasks] == ["done", "done"]
    facts = b.facts.search(about="chores")["results"]
    assert len(facts) == 2
    assert all(c["status"] == "verified" for c in b.claim.list()["claims"])
    assert b.arc.resume()["lastEvent"]["kind"] in ("post_turn_persisted", "agent_note")
