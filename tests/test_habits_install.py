"""``ouro habits install cron|launchd|systemd``: print, or write for this user only.

HOME and PATH point into the test's temp folder: no test touches a real crontab
or home directory (``crontab`` here is a fake that keeps its table in a file).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.habits.install import install_entry
from tests.conftest import ouro_json, run_ouro

FAKE_CRONTAB = """#!/bin/sh
table="$HOME/crontab.txt"
if [ "$1" = "-l" ]; then
  if [ -f "$table" ]; then cat "$table"; else echo "no crontab for tester" >&2; exit 1; fi
elif [ "$1" = "-" ]; then
  cat > "$table"
fi
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    fake = home / "bin" / "crontab"
    fake.write_text(FAKE_CRONTAB)
    fake.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return home


def test_cron_prints_then_merges_idempotently(bundle: Bundle, home: Path) -> None:
    printed = install_entry(bundle, "cron")
    line = printed["entry"]
    assert line.startswith("* * * * * ")
    assert f"--bundle {shlex.quote(str(bundle.root))} habits tick --trigger cron" in line
    assert line.endswith(f"# ouro-habits {bundle.root}")
    assert not (home / "crontab.txt").exists()  # printing writes nothing

    (home / "crontab.txt").write_text("0 3 * * * backup.sh\n")
    assert install_entry(bundle, "cron", write=True)["changed"] is True
    assert (home / "crontab.txt").read_text() == f"0 3 * * * backup.sh\n{line}\n"
    assert install_entry(bundle, "cron", write=True)["changed"] is False
    # an older entry for the same bundle is replaced, not duplicated
    stale = line.replace("* * * * *", "*/5 * * * *")
    (home / "crontab.txt").write_text(f"{stale}\n0 3 * * * backup.sh\n")
    install_entry(bundle, "cron", write=True)
    assert (home / "crontab.txt").read_text() == f"0 3 * * * backup.sh\n{line}\n"


def test_cron_entry_runs_a_tick(bundle: Bundle, home: Path) -> None:
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / "h.yaml").write_text(f"title: h\ncadence: 1h\nrun: {sys.executable} -c pass\n")
    command = install_entry(bundle, "cron")["entry"].split(" ", 5)[5]
    subprocess.run(command, shell=True, check=True, cwd=home)  # as cron would (sh -c)
    last = ouro_json("habits", "last", "h", bundle=bundle)
    assert last["receipt"]["trigger"] == "cron"


def test_first_crontab_for_the_user(bundle: Bundle, home: Path) -> None:
    install_entry(bundle, "cron", write=True)
    assert (home / "crontab.txt").read_text().count("# ouro-habits") == 1


def test_launchd_plist(bundle: Bundle, home: Path) -> None:
    result = install_entry(bundle, "launchd", write=True)
    [path] = map(Path, result["files"])
    assert path.parent == home / "Library" / "LaunchAgents"
    text = path.read_text()
    assert "<string>launchd</string>" in text and "<integer>60</integer>" in text
    assert f"<string>{bundle.root}</string>" in text
    assert result["next"].startswith("launchctl bootstrap gui/")
    assert install_entry(bundle, "launchd", write=True)["changed"] is False


def test_systemd_user_units(bundle: Bundle, home: Path) -> None:
    result = install_entry(bundle, "systemd", write=True)
    service, timer = map(Path, result["files"])
    assert service.parent == home / ".config" / "systemd" / "user"
    assert "habits tick --trigger cron" in service.read_text()
    assert "OnCalendar=*-*-* *:*:00" in timer.read_text()
    assert timer.name.endswith(".timer") and "enable --now" in result["next"]


def test_cli_prints_without_writing(bundle: Bundle, home: Path) -> None:
    proc = run_ouro(
        "habits", "install", "systemd", bundle=bundle, env={"HOME": str(home)}, check=True
    )
    assert "[Timer]" in proc.stdout and "next: systemctl --user daemon-reload" in proc.stdout
    assert not (home / ".config").exists()
