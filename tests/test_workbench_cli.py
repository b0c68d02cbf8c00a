"""``ouro workbench`` as the user runs it: a real process serving on 127.0.0.1."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from ouro.bundle import Bundle


def _start(bundle: Bundle, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "DISPLAY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "workbench", *args],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = ""
    while True:
        line = proc.stderr.readline()
        assert line, f"workbench exited: {seen}"
        seen += line
        match = re.search(r"(http://[\d.]+:\d+/)", line)
        if match:
            return proc, match.group(1), seen


@pytest.mark.slow
def test_serves_on_loopback_and_stops_on_sigint(bundle: Bundle) -> None:
    proc, url, _ = _start(bundle, "--port", "0")
    try:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=30) as resp:
            html = resp.read().decode()
        assert resp.status == 200 and "<h1>Now</h1>" in html
        assert "Content-Security-Policy" in resp.headers
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert proc.returncode == 0


@pytest.mark.slow
def test_another_interface_only_with_host_and_a_warning(bundle: Bundle) -> None:
    proc, url, seen = _start(bundle, "--port", "0", "--host", "0.0.0.0")
    try:
        assert url.startswith("http://0.0.0.0:")
        assert "warning: serving on 0.0.0.0" in seen
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_cli_start_stays_lean() -> None:
    code = (
        "import sys, ouro.cli.run, ouro.cli.workbench, ouro.workbench.server;"
        "bad = [m for m in ('jinja2', 'markdown_it', 'selenium') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_pages_answer_while_another_process_writes(bundle: Bundle) -> None:
    """A writer process appends events while the server renders the Timeline and Now."""
    proc, url, _ = _start(bundle, "--port", "0")
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom ouro.cli.run import run\n"
         "for n in range(40):\n"
         f"    run(['--bundle', {str(bundle.root)!r}, 'arc', 'note', f'step {{n}}'])\n"],
        stdout=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "OURO_BUNDLE"},
    )  # fmt: skip
    try:
        seen = 0
        while writer.poll() is None or seen < 5:
            for page in ("timeline", ""):
                with urllib.request.urlopen(url + page, timeout=30) as resp:
                    html = resp.read().decode()
                assert resp.status == 200 and "unreadable line" not in html
            seen += 1
        assert writer.wait(timeout=60) == 0
        with urllib.request.urlopen(url + "timeline", timeout=30) as resp:
            assert "step 39" in resp.read().decode()
    finally:
        writer.kill()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


@pytest.mark.slow
def test_the_wheel_ships_templates_and_assets(tmp_path: Path) -> None:
    import zipfile

    from tests.conftest import REPO

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(tmp_path)],
        check=True,
    )
    names = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    for name in ("now", "timeline", "claims", "recovery", "desk", "record", "habits", "search"):
        assert f"ouro/workbench/templates/{name}.html" in names
    assert "ouro/workbench/static/live.js" in names and "ouro/workbench/static/style.css" in names
