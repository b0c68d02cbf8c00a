"""Human output helpers: tables with headers, colour only where it belongs,
relative dates, one-line write confirmations."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from ouro import config
from ouro.bundle import Bundle
from ouro.cli import output
from ouro.cli.run import run


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("OURO_COLOR", raising=False)
    monkeypatch.delenv("OURO_DATES", raising=False)
    monkeypatch.setattr(config, "COMMAND_LINE", {})
    output.reset()


def test_table_has_a_header_and_aligned_columns() -> None:
    text = output.table(
        [{"id": "a", "title": "long title"}, {"id": "bbb", "title": None}], ["id", "title"]
    )
    assert text.splitlines() == ["ID   TITLE", "a    long title", "bbb  -"]
    assert output.table([], ["id"], empty="no tasks") == "no tasks"


def test_colour_only_when_asked_or_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert output.status("blocked") == "blocked"  # captured stdout is not a terminal
    monkeypatch.setattr(config, "COMMAND_LINE", {"color": "always"})
    output.reset()
    assert output.status("blocked") == "\x1b[31m\x1b[1mblocked\x1b[0m"
    assert output.status("whatever") == "whatever"
    monkeypatch.setenv("NO_COLOR", "1")
    output.reset()
    assert output.status("blocked") == "blocked"


def test_relative_dates() -> None:
    now = 1_800_000_000.0
    from datetime import UTC, datetime

    def iso(seconds_ago: float) -> str:
        return datetime.fromtimestamp(now - seconds_ago, UTC).isoformat().replace("+00:00", "Z")

    assert output.when(iso(10), now=now) == "just now"
    assert output.when(iso(3 * 3600 + 5), now=now) == "3h ago"
    assert output.when(iso(-2 * 86400 - 5), now=now) == "in 2d"
    assert output.when("2026-01-31", now=now) == "2026-01-31"
    assert output.when(None) == "-"
    config.COMMAND_LINE["dates"] = "absolute"
    assert output.when(iso(10), now=now) == iso(10)


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run(argv)
    return code, out.getvalue()


def test_writes_confirm_in_one_line_and_verbose_shows_the_record(bundle: Bundle) -> None:
    base = ["--bundle", str(bundle.root)]
    code, out = _run([*base, "diary", "write", "Ari prefers short replies", "--about", "ari"])
    assert code == 0 and len(out.splitlines()) == 1
    assert out.startswith("recorded fact f-") and "desk/_record/diary/facts.jsonl#f-" in out
    code, out = _run([*base, "--verbose", "diary", "write", "The build takes 9 minutes"])
    assert code == 0 and "provenance:" in out and "hash: sha256:" in out
    assert not out.lstrip().startswith("{")  # never a JSON dump in human mode
    code, out = _run([*base, "diary", "write", "The build takes 9 minutes", "--json"])
    assert json.loads(out)["duplicate"] is True
