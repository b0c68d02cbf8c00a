"""Day-file marks (ouro.arc.fold): an unchanged day file costs one stat per read.

After a copy or restore every inode and ctime differs, so each folded day file
is re-digested once; the digest is remembered keyed on the file's fingerprint,
per process and in the machine-local cache ``state/cache/arc-digests.marshal``
(a read may heal a cache under state/), and a writer persists the refreshed
fingerprints in the checkpoint. An edit in place is still seen on the next read.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest

from ouro.arc import fold, paths
from ouro.arc.recorder import record_event, write_checkpoint
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.store import stamp as stamps
from tests.conftest import record_snapshot


def _events(bundle: Bundle) -> None:
    record_event(bundle, "turn_accepted", "ask", current_ask="ship the parser")
    record_event(bundle, "agent_note", "next", next_safe_action="run the tests")
    time.sleep(stamps.RACY_NS / 1e9 + 0.05)  # let every fingerprint be trusted


def _marks(bundle: Bundle) -> dict[str, dict[str, object]]:
    data = orjson.loads(paths.checkpoint_path(bundle).read_bytes())
    marks: dict[str, dict[str, object]] = data["fold"]["cursor"]["marks"]
    return marks


def _copy(bundle: Bundle, tmp_path: Path) -> Bundle:
    target = tmp_path / "copy.ouro"
    shutil.copytree(bundle.root, target)  # new inodes and ctimes, same bytes
    time.sleep(stamps.RACY_NS / 1e9 + 0.05)
    return Bundle.open(target)


def _codes(bundle: Bundle) -> list[str]:
    return [i["code"] for i in read_resume(bundle)["recorder"]["issues"]]


def test_a_copied_bundle_is_digested_once_per_process_and_refreshed_by_a_writer(
    bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _events(bundle)
    copy = _copy(bundle, tmp_path)
    digested: list[str] = []
    real = fold._hasher  # every digest, of a line or of a prefix

    def spy(raw: bytes) -> object:
        digested.append("x")
        return real(raw)

    monkeypatch.setattr(fold, "_hasher", spy)
    before = record_snapshot(copy.root)
    assert read_resume(copy)["currentAsk"]["value"] == "ship the parser"
    first = len(digested)
    assert first >= 1  # the prefix of the day file, re-digested: its inode moved
    assert "checkpoint_inconsistent" not in _codes(copy)
    second = len(digested) - first
    assert second < first  # the prefix digest is remembered (only the last line is re-hashed)
    assert record_snapshot(copy.root) == before  # reads changed nothing of the record
    # a writer persists the day files' current fingerprints
    fold._DIGESTS.clear()
    with paths.arc_lock(copy, "test"):
        write_checkpoint(copy)
    names = fold.day_files(paths.events_dir(copy))
    for name in names:
        st = (paths.events_dir(copy) / name).stat()
        assert _marks(copy)[name]["fp"] == [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    digested.clear()
    read_resume(copy)
    assert len(digested) == 1  # only the line before the cursor: no prefix digest


def test_an_edit_in_place_after_a_remembered_digest_is_seen(bundle: Bundle, tmp_path: Path) -> None:
    _events(bundle)
    copy = _copy(bundle, tmp_path)
    assert "checkpoint_inconsistent" not in _codes(copy)  # digest remembered for copy
    day = paths.events_dir(copy) / fold.day_files(paths.events_dir(copy))[0]
    data = day.read_bytes()
    # same size, one byte changed inside the first (folded) line
    assert b"ship the parser" in data
    with open(day, "r+b") as handle:
        handle.write(data.replace(b"ship the parser", b"ship the parsed", 1))
    assert "checkpoint_inconsistent" in _codes(copy)
    assert read_resume(copy)["currentAsk"]["value"] == "ship the parsed"


def test_a_copied_bundle_is_digested_once_across_processes(bundle: Bundle, tmp_path: Path) -> None:
    """The second process reading a copy finds the first one's digests in the
    state/ cache (each valid only under the file's trusted stamp): no prefix is
    digested again, nothing of the record changes, and an edit in place after
    the cache was saved is still seen."""
    import subprocess
    import sys

    _events(bundle)
    copy = _copy(bundle, tmp_path)
    before = record_snapshot(copy.root)
    probe = (
        "import sys; from pathlib import Path; from ouro.arc import fold;"
        "from ouro.arc.resume import read_resume; from ouro.bundle import Bundle;"
        "n = []; real = fold._hasher;"
        "fold._hasher = lambda raw: (n.append(1), real(raw))[1];"
        "read_resume(Bundle.open(Path(sys.argv[1]))); print(len(n))"
    )

    def digests() -> int:
        out = subprocess.run(
            [sys.executable, "-c", probe, str(copy.root)], capture_output=True, check=True
        )
        return int(out.stdout.strip())

    first = digests()
    assert (copy.root / fold.DIGESTS_CACHE).is_file()
    assert digests() == 1 < first  # only the line before the cursor
    assert record_snapshot(copy.root) == before
    day = paths.events_dir(copy) / fold.day_files(paths.events_dir(copy))[0]
    data = day.read_bytes()
    with open(day, "r+b") as handle:  # same size, in place: its stamp moves
        handle.write(data.replace(b"ship the parser", b"ship the parsed", 1))
    assert "checkpoint_inconsistent" in _codes(copy)


def test_a_write_extends_the_verified_prefix_digest_with_the_bytes_it_folds(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write right after an append (a hook's event) digests the current day
    file's prefix once, to check it, and extends that digest with the line it
    folds: the new mark is the digest of the whole new prefix, and an edit in
    place of the folded bytes is still seen."""
    record_event(bundle, "turn_accepted", "ask", current_ask="ship the parser")
    record_event(bundle, "agent_note", "one")  # its mark: racy, so the next write digests
    lengths: list[int] = []
    real = fold._hasher

    def spy(raw: bytes) -> object:
        lengths.append(len(raw))
        return real(raw)

    monkeypatch.setattr(fold, "_hasher", spy)
    record_event(bundle, "agent_note", "two")
    name = fold.day_files(paths.events_dir(bundle))[-1]
    data = (paths.events_dir(bundle) / name).read_bytes()
    mark = _marks(bundle)[name]
    assert mark["length"] == len(data)
    assert mark["digest"] == real(data).hexdigest()  # as a digest of the whole prefix
    # one prefix read (the check), no second one for the mark: the rest are lines
    assert len([n for n in lengths if n > len(data.splitlines()[-1])]) == 1
    monkeypatch.setattr(fold, "_hasher", real)
    first = data.index(b"ship")
    (paths.events_dir(bundle) / name).write_bytes(data[:first] + b"S" + data[first + 1 :])
    assert "checkpoint_inconsistent" in _codes(bundle)


def test_a_long_event_line_leaves_the_checkpoint_consistent(bundle: Bundle) -> None:
    # a line longer than the cursor check reads back (64 KiB) but under LINE_LIMIT:
    # its digest covers what the check reads, so no read folds from scratch again
    record_event(bundle, "turn_accepted", "ask", current_ask="ship the parser")
    record_event(bundle, "agent_note", "long " * 30_000)
    write_checkpoint(bundle)
    assert _codes(bundle) == [] and _codes(bundle) == []
    record_event(bundle, "agent_note", "after the long one")
    assert _codes(bundle) == []
