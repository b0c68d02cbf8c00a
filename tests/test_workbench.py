"""The workbench without a browser: pages, safety, purity, the server's edges,
the static build. (``test_workbench_browser.py`` drives a real Chromium.)"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import threading
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.workbench.app import Workbench, parse_query
from ouro.workbench.pages import PAGES
from ouro.workbench.server import make_server
from ouro.workbench.site import build_site
from tests.conftest import REPO, cli_run
from tests.workbench_support import SECRETS, ouro, realistic_bundle

PAGE_PATHS = ["/", *(f"/{name}" for name in PAGES if name != "now")]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """The realistic bundle, built once; tests that change it work on a copy."""
    root = tmp_path_factory.mktemp("wb") / "demo.ouro"
    bundle = realistic_bundle(root)
    ouro(root, "index", "sync")
    return bundle


@pytest.fixture
def copy(made: Bundle, tmp_path: Path) -> Bundle:
    target = tmp_path / "copy.ouro"
    shutil.copytree(made.root, target, symlinks=True)
    return Bundle.open(target)


class Served:
    def __init__(self, bundle: Bundle) -> None:
        self.server = make_server(bundle)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def request(
        self, path: str, method: str = "GET", host: str | None = None
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Host": host or f"127.0.0.1:{self.port}"}
        conn.request(method, path, headers=headers)
        resp = conn.getresponse()
        body = resp.read().decode("utf-8", errors="replace")
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served(made: Bundle) -> Iterator[Served]:
    s = Served(made)
    yield s
    s.stop()


#: what a read may rebuild (docs/concepts.md, "Derived state"): a machine-local
#: cache found stale, e.g. desk heads whose last task files were racy when cached
HEALED = ("state/cache", "state/locks")


def full_snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file's bytes and mtime, and every folder's mtime, but ``HEALED``."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in HEALED]
        out[f"{rel}/"] = (None, os.stat(folder).st_mtime_ns)
        for name in files:
            path = Path(folder) / name
            st = path.lstat()
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            out[f"{rel}/{name}"] = (data, st.st_mtime_ns)
    return out


# --- what the pages show ----------------------------------------------------------


def test_now_shows_ask_next_action_handoff_claims_and_the_blocked_check(made: Bundle) -> None:
    html = Workbench(made, served=True).render("now")
    assert "migrate the auth tokens to the new table" in html
    assert "copy the tokens table, then compare row counts" in html
    assert "switching production reads" in html  # stop before
    assert "auth migration half done: tokens copied, reads not switched" in html  # handoff
    assert "needs confirmation" in html  # the handoff: the ask needs confirming
    assert "waiting for a DBA to grant ALTER on auth_tokens" in html  # blocker
    assert "the tokens table copy has the same row count" in html  # unverified claim
    assert 'data-status="evidence_required"' in html
    assert "tell Ari when the fix ships" in html and "slack:C0123" in html  # return route
    check = re.search(r'data-check="stale_guard".*?</tr>', html, re.S)
    assert check and "fail" in check.group(0)
    assert "ouro arc query blocked" in check.group(0)  # its repair command


def test_record_shows_the_supersede_chain_and_renders_notes_without_raw_html(made: Bundle) -> None:
    html = Workbench(made, served=True).render("record")
    old = re.search(r'<article class="fact superseded".*?</article>', html, re.S)
    assert old and "tokens live in the auth_tokens table" in old.group(0)
    assert "superseded by" in old.group(0) and "tokens moved to the tokens_v2 table" in old.group(0)
    assert "supersedes" in html
    assert "<h3>Token migration runbook</h3>" in html  # Markdown rendered
    assert "<table>" in html and "<strong>tokens_v2</strong>" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html  # raw HTML escaped
    assert 'href="javascript:' not in html


def test_every_page_renders_served_and_static(made: Bundle) -> None:
    for served in (True, False):
        bench = Workbench(made, served=served)
        for name in PAGES:
            html = bench.render(name)
            assert '<main id="main"' in html and "</html>" in html, name
            assert ("/static/live.js" in html) is served


def test_recovery_desk_habits_claims_show_their_receipts(made: Bundle) -> None:
    bench = Workbench(made, served=True)
    recovery = bench.render("recovery")
    assert "<svg" in recovery and "drills: 8/8 passed" in recovery
    assert 'class="pt p-blocked"' in recovery and 'class="pt p-ready"' in recovery
    desk = bench.render("desk")
    assert "held by <strong>demo</strong>" in desk and "1 iteration(s)" in desk
    assert "the copy script has no dry-run flag" in desk
    habits = bench.render("habits")
    assert "Recent runs" in habits and "surfaced" in habits and "queued" in habits
    claims = bench.render("claims")
    assert "unchanged" in claims and "ouro claim verify" in claims
    assert "observed-by-ouro" in claims  # how the receipt was obtained


def test_timeline_pages_and_filters(copy: Bundle) -> None:
    for n in range(120):
        ouro(copy.root, "arc", "note", f"step {n} done", "--session", "s-many")
    bench = Workbench(copy, served=True)
    first = bench.render("timeline")
    assert first.count('<li class="event') == 50 and "step 119 done" in first
    assert 'rel="next"' in first and "/timeline?session=s-many" in first
    third = bench.render(
        "timeline", parse_query("timeline", {"page": ["3"], "kind": ["agent_note"]})
    )
    assert "step 0 done" not in third or third.count('<li class="event') <= 50
    only = bench.render("timeline", parse_query("timeline", {"kind": ["handoff"]}))
    assert only.count('<li class="event') == 1 and "context boundary" in only
    with pytest.raises(InvalidInput):
        parse_query("timeline", {"kind": ["<script>"]})
    with pytest.raises(InvalidInput):
        parse_query("timeline", {"page": ["-1"]})


def test_cached_derived_files_follow_writes(copy: Bundle) -> None:
    bench = Workbench(copy, served=True)
    assert "zebra-crossing" not in bench.render("record")
    ouro(
        copy.root, "diary", "write", "the zebra crossing is on Main St", "--about", "zebra-crossing"
    )
    body = copy.root.parent / "zebra.md"
    body.write_text("Cross at the stripes.\n")
    ouro(copy.root, "notes", "write", "Zebra crossings", "--body-file", str(body))
    html = bench.render("record")
    assert html.count("zebra-crossing") >= 2 and "Zebra crossings" in html  # entity + note


def test_timeline_marks_a_compaction(copy: Bundle) -> None:
    """The host's own payloads: PreCompact, then SessionStart with source compact."""
    import json

    folder = REPO / "tests" / "fixtures" / "hooks" / "claude"
    for event, extra in (("PreCompact", {}), ("SessionStart", {"source": "compact"})):
        payload = {**json.loads((folder / f"{event}.json").read_text()), **extra}
        payload["cwd"] = str(copy.root)
        result = cli_run(["hook", "claude", event], input=json.dumps(payload),
            env={"OURO_BUNDLE": str(copy.root)},
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    html = Workbench(copy, served=True).render("timeline")
    assert html.count("context compacted here") == 2


def test_secondary_lists_are_paged(copy: Bundle) -> None:
    for n in range(22):
        ouro(copy.root, "desk", "tip", "add", f"tip number {n:02d}")
    bench = Workbench(copy, served=True)
    first = bench.render("desk")
    assert first.count("tip number") == 19 and "/desk?tips=2" in first  # + the session's tip
    second = bench.render("desk", parse_query("desk", {"tips": ["2"]}))
    assert second.count("tip number") == 3 and "/desk?tips=1" in second
    static = Workbench(copy, served=False).render("desk")
    assert "ouro desk tip list" in static  # the static site names the command for the rest
    with pytest.raises(InvalidInput):
        parse_query("record", {"notes": ["0"]})


def test_unknown_stays_unknown(copy: Bundle) -> None:
    shutil.rmtree(copy.root / "arc" / "claims")
    html = Workbench(copy, served=True).render("now")
    assert "Claims not verified" in html
    section = re.search(r'id="claims".*?</section>', html, re.S)
    assert section and "unknown" in section.group(0)
    assert "None recorded" not in section.group(0)


def test_broken_sources_read_as_unknown_or_degraded(copy: Bundle) -> None:
    sentinel = copy.root / "arc" / "flight-recorder" / "context-loss-sentinel"
    (sentinel / "latest.json").write_text("{not json")
    shutil.rmtree(copy.root / "arc" / "flight-recorder" / "events")
    bench = Workbench(copy, served=True)
    now = bench.render("now")
    assert "degraded" in now and "latest.json" in now
    timeline = bench.render("timeline")
    assert "unknown:" in timeline and "events/ is missing" in timeline
    assert "No events" not in timeline
    recovery = bench.render("recovery")
    assert "degraded" in recovery and "<svg" in recovery  # the ledger still charts
    (copy.root / "arc" / "claims" / "cl-01m8zzzzzzzzzzzzzz.json").write_text("{broken")
    claims = bench.render("claims")
    assert "unreadable" in claims and "cl-01m8zzzzzzzzzzzzzz.json" in claims


# --- safe by construction -----------------------------------------------------------


def test_no_seeded_secret_in_any_page(made: Bundle, served: Served, tmp_path: Path) -> None:
    bodies = [served.request(path)[2] for path in PAGE_PATHS]
    bodies.append(served.request("/search?q=token")[2])
    for locator in (
        "desk/_record/notes/token-migration-runbook.md",
        "desk/_record/diary/facts.jsonl#f-01m8zzzzzzzzzzzzzz",
        "desk/_record/diary/facts.jsonl",
        "bundle.json",
    ):
        status, _, body = served.request(f"/locator?l={locator}")
        assert status == 200, (locator, body)
        bodies.append(body)
    build_site(made, tmp_path / "site")
    bodies += [p.read_text() for p in (tmp_path / "site").glob("*.html")]
    for body in bodies:
        for secret in SECRETS:
            assert secret not in body
    assert any("[redacted:literal]" in b for b in bodies)
    assert any("[redacted:github_token]" in b for b in bodies)


def test_hostile_text_is_escaped_everywhere(copy: Bundle) -> None:
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    ouro(copy.root, "arc", "ask", f"look at {hostile}")
    ouro(copy.root, "diary", "write", f"fact {hostile}", "--about", hostile)
    ouro(copy.root, "desk", "task", "add", "auth-migration", f"task {hostile}")
    for served in (True, False):
        bench = Workbench(copy, served=served)
        for name in PAGES:
            html = bench.render(name)
            assert "<img src=x" not in html and "<script>alert(2)" not in html, name
    html = Workbench(copy, served=True).render(
        "record", parse_query("record", {"entity": [hostile]})
    )
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_server_is_read_only_and_validates_input(served: Served) -> None:
    status, headers, body = served.request("/")
    assert status == 200
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "default-src 'none'" in policy
    assert headers["x-content-type-options"] == "nosniff"
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, _ = served.request("/", method=method)
        assert status == 405 and headers["allow"] == "GET, HEAD"
    assert served.request("/timeline?page=abc")[0] == 400
    assert served.request("/locator?l=../../etc/passwd")[0] == 400
    assert served.request("/locator?l=/etc/passwd")[0] == 400
    assert served.request("/nope")[0] == 404
    assert served.request("/timeline?" + "&".join(f"x{n}=1" for n in range(60)))[0] == 400
    assert served.request("/", host="evil.example:80")[0] == 421
    status, headers, body = served.request("/api/stamp")
    assert status == 200 and '"stamp"' in body


def test_static_site_is_self_contained(made: Bundle, tmp_path: Path) -> None:
    out = tmp_path / "site"
    written = build_site(made, out)
    assert "index.html" in written
    for page in out.glob("*.html"):
        html = page.read_text()
        assert "<script" not in html
        assert not re.search(r'(?:src|href)="(?:https?:)?//', html.replace(
            'href="https://example.org/docs"', ""))  # fmt: skip
        assert "Content-Security-Policy" in html and "script-src 'none'" in unescape(html)
        for link in re.findall(r'href="([^"#]+\.html)"', html):
            assert (out / link).exists(), (page.name, link)
    build_site(made, out)  # a previous build may be replaced


def test_build_refuses_inside_the_bundle_and_foreign_folders(made: Bundle, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="inside the bundle"):
        build_site(made, made.root / "site")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(InvalidInput, match="not empty"):
        build_site(made, foreign)
    assert (foreign / "keep.txt").read_text() == "mine"


def test_cli_build(made: Bundle, tmp_path: Path) -> None:
    out = tmp_path / "cli-site"
    result = cli_run(["--bundle", str(made.root), "--json", "workbench", "build", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").exists() and '"files"' in result.output


# --- reading only --------------------------------------------------------------------


def test_workbench_changes_no_file_while_serving_and_building(made: Bundle, tmp_path: Path) -> None:
    before = full_snapshot(made.root)
    served = Served(made)
    try:
        for path in [*PAGE_PATHS, "/search?q=tokens", "/search?q=release&kind=note",
                     "/record?entity=auth", "/timeline?kind=handoff", "/api/stamp",
                     "/locator?l=arc/flight-recorder/latest.json", "/static/live.js"]:  # fmt: skip
            assert served.request(path)[0] == 200, path
    finally:
        served.stop()
    build_site(made, tmp_path / "site")
    assert full_snapshot(made.root) == before
