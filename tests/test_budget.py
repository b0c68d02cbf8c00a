"""Each host's cap per injecting event holds against a bundle built to overflow it.

The table is ``ouro.hooks.budget.BUDGETS`` (docs/hooks.md shows it: checked
here). Over the cap the packet drops its lowest-priority parts first, keeps the
priority-0 ones (status, ask, next safe action), and ends with one line saying
what it left out and which tool shows the rest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ouro
from ouro.bundle import Bundle
from ouro.hooks import budget
from ouro.hooks.budget import BUDGETS, Budget, cost, fits
from ouro.hooks.common import Options, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.hooks.stdio import host_named
from tests.conftest import REPO

#: Hosts whose overflow is tested here (add yours with its rows).
HOSTS = ("claude", "codex", "gemini", "pi", "opencode")
ASK = "解析器 ASK-MARKER-5c1d 把解析器移植到新的词法分析器"
NEXT = "NEXT-MARKER-77e0 运行解析器测试"
#: ouro's own packet target, raised far above every cap: the packet then holds
#: everything the bundle has (about 14,000 characters, 30,000 UTF-8 bytes).
BIG = Options(budget=100_000)


def _doc_rows() -> set[tuple[str, str, int, str, str]]:
    text = (REPO / "docs" / "hooks.md").read_text(encoding="utf-8")
    block = text.split("<!-- budget table -->")[1]
    rows = set()
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[2].replace(",", "").isdigit():
            host, event, limit, unit, source = cells
            rows.add((host, event.strip("`"), int(limit.replace(",", "")), unit, source))
    return rows


def test_the_doc_table_is_the_budget_table() -> None:
    assert _doc_rows() == {
        (host, event, b.limit, b.unit, b.source) for (host, event), b in BUDGETS.items()
    }


def test_costs_are_counted_conservatively() -> None:
    chars = Budget(10, "chars", "")
    tokens = Budget(10, "tokens", "")
    assert cost("abc", chars) == 3 and cost("界", chars) == 1 and cost("😀", chars) == 2
    assert cost("abcd", tokens) == 2  # ceil(4 bytes / 3)
    assert cost("界界", tokens) == 2  # 6 bytes
    assert all(b.unit in ("chars", "tokens") and b.limit > 0 for b in BUDGETS.values())
    assert fits("x" * 10, chars) and not fits("x" * 11, chars)


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle whose whole packet is far over every cap (CJK text: 3 bytes a character)."""
    root = tmp_path_factory.mktemp("crowded") / "crowded.ouro"
    Bundle.init(root, agent="tester")
    b = ouro.open(root)
    b.arc.ask(ASK + " " + "任务" * 300)
    b.arc.next(NEXT + " " + "下一步" * 100)
    for i in range(32):  # each packet line is cut at about 250 characters
        b.claim.add(f"声明 {i} " + "声明" * 200)
    for i in range(12):
        b.obligation.add(f"义务 {i} " + "义务" * 200, to="用户")
    return root


def _run(host: str, event: str, bundle: Path, session: str, source: str = "startup") -> str:
    stdin = {"session_id": session, "cwd": str(bundle.parent), "hook_event_name": event}
    if event == "SessionStart":
        stdin["source"] = source
    out = run_hook(
        host_named(host), event, json.dumps(stdin), bundle_path=str(bundle), env={},
        options=BIG, handlers=HANDLERS,
    )  # fmt: skip
    assert out.stderr == [], out.stderr
    text: str = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


@pytest.mark.parametrize("host", HOSTS)
def test_session_start_holds_the_cap(host: str, crowded: Path) -> None:
    cap = BUDGETS[(host, "SessionStart")]
    text = _run(host, "SessionStart", crowded, f"{host}-start")
    assert fits(text, cap), (cost(text, cap), cap)
    assert cost(text, cap) > cap.limit * 0.8  # the room is used, not thrown away
    drop = text.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(
        r"\[ouro: to fit .+ left out \d+ packet items \(.+\).+'ouro orient'.+\]", drop
    )
    # the highest-priority parts survive: the status, the ask, the next safe action
    for marker in ("## status", "ASK-MARKER-5c1d", "NEXT-MARKER-77e0"):
        assert marker in text
    assert text.count("[ouro: ") == 1


#: changed items enough to overflow each host's cap (Claude's needs 40: slow)
DELTAS = [pytest.param("claude", 42, marks=pytest.mark.slow), ("codex", 20)]


@pytest.mark.parametrize(("host", "claims"), DELTAS)
def test_a_delta_holds_the_cap(host: str, claims: int, crowded: Path) -> None:
    cap = BUDGETS[(host, "UserPromptSubmit")]
    session = f"{host}-delta"
    _run(host, "SessionStart", crowded, session)
    b = ouro.open(crowded)
    for i in range(claims):
        b.claim.add(f"新声明 {host} {i} " + "新的声明" * 100)
    b.arc.next("NEXT2-MARKER-1f0a " + "再次运行" * 100)
    text = _run(host, "UserPromptSubmit", crowded, session)
    assert fits(text, cap), (cost(text, cap), cap)
    assert "NEXT2-MARKER-1f0a" in text  # priority 0 goes last
    assert re.search(r"\[ouro: to fit .+ left out \d+ changed items; 'ouro orient'", text)


def test_without_room_for_the_packet_the_guide_goes_before_the_ask(crowded: Path) -> None:
    from ouro import guide
    from ouro.hooks.packet import fit_packet
    from ouro.orient import CUT_MARKER

    tiny = Budget(700, "chars", "")

    def packed(size: int) -> tuple[str, dict[str, int]]:
        must = f"# orient\n## ask\n- {ASK}\n"
        if size >= len(must):
            return must, {"claims": 30}
        return must[: max(0, size - len(CUT_MARKER))] + CUT_MARKER, {"claims": 30}

    text = fit_packet(packed, 2500, guide.render(), tiny, "Tiny")
    assert fits(text, tiny) and ASK in text and "operating guide v" not in text
    assert "the operating guide" in text.splitlines()[-1]


def test_a_cut_says_so() -> None:
    cap = Budget(50, "tokens", "")
    text = budget.cut("界\n" * 500, cap)
    assert fits(text, cap) and text.endswith(budget.CUT_NOTE)
