"""The soak suite at CI size (marker ``soak``; ``.ci/run`` runs it after the fast
suite). The scenarios live in ``bench/soak.py``, which prints the same figures:
``python bench/soak.py --full`` is the full-size run (docs/concepts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import soak

pytestmark = pytest.mark.soak

SIZE = soak.SIZES["ci"]


def test_concurrent_diary_writes_lose_and_tear_nothing(tmp_path: Path) -> None:
    figures = soak.concurrent(tmp_path, SIZE["procs"], SIZE["writes"])
    print(figures)
    assert figures["errors"] == 0 and figures["torn"] == 0 and figures["lost"] == 0
    assert figures["fileFacts"] == SIZE["procs"] * SIZE["writes"] == figures["indexFacts"]


def test_sigkills_across_every_writer_leave_nothing_torn_or_behind(tmp_path: Path) -> None:
    figures = soak.kills(tmp_path, SIZE["kills"])
    print(figures)
    assert figures["nextWriteErrors"] == []
    assert figures["torn"] == 0 and figures["badJson"] == 0
    assert figures["temps"] == 0, figures["tempNames"]


def test_a_full_disk_gives_clear_errors_and_partial_writes_never(tmp_path: Path) -> None:
    figures = soak.disk_full(tmp_path)
    if "skipped" in figures:
        pytest.skip(figures["skipped"])
    print(figures)
    assert figures["tracebacks"] == 0 and figures["partialWrites"] == 0, figures["problems"]
    assert figures["unclear"] == 0, figures["problems"]
    assert figures["failuresAfterSpaceFreed"] == []
    assert figures["torn"] == 0 and figures["temps"] == 0


def test_the_bad_input_corpus_gets_clear_errors_and_writes_nothing(tmp_path: Path) -> None:
    figures = soak.bad_input(tmp_path)
    print({k: v for k, v in figures.items() if k != "problems"})
    assert figures["cases"] >= 300
    assert figures["clear"] == figures["cases"], figures["problems"]
    assert figures["bundleUnchanged"]


def test_every_read_command_changes_no_file(tmp_path: Path) -> None:
    figures = soak.reads(tmp_path)
    print(figures)
    assert figures["failed"] == []
    assert figures["filesChanged"] == 0, figures["changed"]
