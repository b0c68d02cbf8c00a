"""``ouro record redact LOCATOR --match TEXT``: the secret leaves the bundle for good."""

from __future__ import annotations

import os

import orjson
import pytest

from ouro.arc.scrub import MARKER, redact_record
from ouro.bundle import Bundle
from ouro.errors import InvalidInput, InvalidLocator, NotFound
from ouro.store import frontmatter
from tests.conftest import ouro_json, run_ouro, snapshot

SECRET = "hunter2-" + "Qx7Zp9Lm"
FACTS = "desk/_record/diary/facts.jsonl"


def bundle_bytes(bundle: Bundle) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(bundle.root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, bundle.root)] = handle.read()
    return out


def facts(bundle: Bundle) -> list[dict[str, object]]:
    data = (bundle.root / FACTS).read_bytes()
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_one_diary_fact_is_rewritten_and_nothing_keeps_the_secret(bundle: Bundle) -> None:
    kept = ouro_json("diary", "write", "the staging db is on port 5433", bundle=bundle)
    leaked = ouro_json("diary", "write", f"staging login is admin / {SECRET}", bundle=bundle)
    leak_id = leaked["fact"]["id"]
    ouro_json("search", "staging", bundle=bundle)  # the index now holds the text too
    assert any(SECRET.encode() in data for data in bundle_bytes(bundle).values())
    before = (bundle.root / FACTS).read_bytes().splitlines()
    out = ouro_json("record", "redact", f"{FACTS}#{leak_id}", "--match", SECRET, bundle=bundle)
    assert out["occurrences"] == 1 and out["stillFoundIn"] == []
    after = (bundle.root / FACTS).read_bytes().splitlines()
    assert len(after) == len(before)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1  # every other line byte-identical
    texts = {f["id"]: f["text"] for f in facts(bundle)}
    assert texts[leak_id] == f"staging login is admin / {MARKER}"
    assert texts[kept["fact"]["id"]] == "the staging db is on port 5433"
    for rel, data in bundle_bytes(bundle).items():
        assert SECRET.encode() not in data, rel
    event = out["event"]
    assert event["kind"] == "record_redacted" and FACTS in event["summary"]
    assert event["meta"]["occurrences"] == 1
    # Search still works (the index rebuilds) and finds the redacted fact.
    found = ouro_json("search", "staging", bundle=bundle)
    assert SECRET not in orjson.dumps(found).decode()


def test_a_markdown_note(bundle: Bundle) -> None:
    note = bundle.root / "desk/_record/notes/login.md"
    note.write_text(f"# login\npassword is {SECRET}\nand again {SECRET}\n")
    text = run_ouro(
        "record", "redact", "desk/_record/notes/login.md", "--match", SECRET, bundle=bundle
    )
    assert text.returncode == 0, text.stderr
    assert "redacted 2 occurrence(s)" in text.stdout
    assert note.read_text() == f"# login\npassword is {MARKER}\nand again {MARKER}\n"


@pytest.mark.parametrize(
    ("locator", "match", "error"),
    [
        ("desk/_record/notes/login.md", "not-in-the-file", NotFound),
        ("desk/_record/notes/missing.md", SECRET, InvalidLocator),
        ("../outside.md", SECRET, InvalidLocator),
        ("desk/_record/notes/login.md#x", SECRET, InvalidLocator),
        (f"{FACTS}#f-missing", SECRET, NotFound),
        ("desk/_record/notes/login.md", "abc", InvalidInput),
    ],
)
def test_refusals_write_nothing(bundle: Bundle, locator: str, match: str, error: type) -> None:
    (bundle.root / "desk/_record/notes/login.md").write_text(f"pw {SECRET}\n")
    (bundle.root / "state/locks").mkdir(parents=True, exist_ok=True)
    before = snapshot(bundle.root)
    with pytest.raises(error):
        redact_record(bundle, locator, match)
    after = snapshot(bundle.root)
    # Locks may be created; no record, Arc file or index changes.
    assert {k: v for k, v in after.items() if "state/locks" not in k} == {
        k: v for k, v in before.items() if "state/locks" not in k
    }


def test_an_arc_event_line_keeps_the_checkpoint_consistent(bundle: Bundle) -> None:
    ouro_json("arc", "ask", f"deploy with token {SECRET}", bundle=bundle)
    day = next((bundle.root / "arc/flight-recorder/events").glob("*.jsonl"))
    line = next(orjson.loads(x) for x in day.read_bytes().splitlines() if SECRET.encode() in x)
    loc = f"arc/flight-recorder/events/{day.name}#{line['id']}"
    out = redact_record(bundle, loc, SECRET)
    assert out["occurrences"] == 2  # summary and currentAsk
    resume = ouro_json("arc", "resume", bundle=bundle)
    assert resume["currentAsk"]["value"] == f"deploy with token {MARKER}"
    assert resume["recorder"]["health"] == "ok"
    assert [m for m in out["stillFoundIn"] if "context-loss-sentinel" not in m] == []


@pytest.mark.parametrize(
    "locator", ["bundle.json", "state/trust/checks.json", "habits/nightly.yaml", ".gitignore"]
)
def test_files_outside_the_record_are_refused(bundle: Bundle, locator: str) -> None:
    # bundle.json was redacted (its key "agent" became "[redacted:manual]", exit 0)
    path = bundle.root / locator
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(f'{{"x": "{SECRET}"}}\n')
    text = path.read_text()
    match = "agent" if locator == "bundle.json" else SECRET
    if locator == ".gitignore":
        match = text.splitlines()[0]
    before = snapshot(bundle.root)
    proc = run_ouro("record", "redact", locator, "--match", match, bundle=bundle)
    assert proc.returncode == 2, proc.stderr
    assert f"error: {locator} is not a record file (only files under arc/ and desk/" in proc.stderr
    assert snapshot(bundle.root) == before and path.read_text() == text


def test_a_redaction_that_would_break_the_file_writes_nothing(bundle: Bundle) -> None:
    # --match '"text"' on a claim's JSON replaced a key and its quotes (exit 0):
    # the claim was unreadable after. Values are redacted, never keys or syntax.
    claim = ouro_json("claim", "add", f"tests pass {SECRET}", "--check", "true", bundle=bundle)
    loc = f"arc/claims/{claim['id']}.json"
    note = bundle.root / "desk/_record/notes/login.md"
    note.write_text(f"---\ntitle: login\ntags: [{SECRET}]\n---\npw {SECRET}\n")
    ouro_json("diary", "write", f"the token is {SECRET}", bundle=bundle)
    cases = [
        (loc, '"text"', loc),
        (loc, "text", loc),  # a key: the JSON still parses, but lost "text"
        (f"{FACTS}", '"about"', f"{FACTS}:1"),
        ("desk/_record/notes/login.md", "title:", "desk/_record/notes/login.md"),
    ]

    def unlocked() -> dict[str, tuple[bytes, int]]:  # the lock files say who held them last
        return {k: v for k, v in snapshot(bundle.root).items() if "state/locks" not in k}

    for locator, match, broken in cases:
        before = unlocked()
        proc = run_ouro("record", "redact", locator, "--match", match, bundle=bundle)
        assert proc.returncode == 2, (locator, match, proc.stdout, proc.stderr)
        assert f"error: redacting the --match text would break {broken} " in proc.stderr
        assert unlocked() == before, (locator, match)
    # the secret itself, a value, is redacted; every file still reads
    for locator in (loc, FACTS, "desk/_record/notes/login.md"):
        assert redact_record(bundle, locator, SECRET)["occurrences"] >= 1
    listed = ouro_json("claim", "list", bundle=bundle)
    assert [c["text"] for c in listed["claims"]] == [f"tests pass {MARKER}"]
    assert ouro_json("diary", "consult", "token", bundle=bundle)["total"] == 1
    meta, body = frontmatter.parse(note.read_text())  # a secret in a YAML list stays a string
    assert (meta, body) == ({"title": "login", "tags": [MARKER]}, f"pw {MARKER}\n")


def test_leftovers_outside_the_record_are_named_apart(bundle: Bundle) -> None:
    # state/ is a cache: it was offered as 'run ouro record redact state/…'
    note = bundle.root / "desk/_record/notes/login.md"
    note.write_text(f"pw {SECRET}\n")
    cache = bundle.root / "state/cache/copy.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(f'"{SECRET}"')
    proc = run_ouro(
        "record", "redact", "desk/_record/notes/login.md", "--match", SECRET, bundle=bundle
    )
    assert proc.returncode == 0, proc.stderr
    assert "still in: state/cache/copy.json  (a machine-local cache: delete it" in proc.stdout
    assert "ouro record redact state/" not in proc.stdout
    cache.write_text(f'"{SECRET}"')
    note.write_text(f"pw {SECRET}\n")
    out = redact_record(bundle, "desk/_record/notes/login.md", SECRET)
    assert out["stillFoundIn"] == []
    assert out["stillFoundOutsideRecord"] == ["state/cache/copy.json"]
