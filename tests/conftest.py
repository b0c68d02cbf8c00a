"""Shared fixtures. Every test runs in its own temp folder with no inherited
OURO_BUNDLE, so no test can touch a real bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OURO_BUNDLE", raising=False)
    monkeypatch.delenv("OURO_DEBUG", raising=False)
    # hook failure notices keep per-session markers under $XDG_STATE_HOME
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    yield


@pytest.fixture(scope="session")
def demo_output(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """``ouro demo PATH`` run once per session (it takes seconds); read-only for tests."""
    target = tmp_path_factory.mktemp("demo") / "demo.ouro"
    return run_ouro("demo", str(target), check=True)


@pytest.fixture
def bundle(tmp_path: Path) -> Bundle:
    return Bundle.init(tmp_path / "test.ouro", agent="tester")


#: the address-space cap ``capped`` runs the CLI under (kB): ~0.7 GB, more than
#: twice what the CLI maps (orient runs under 0.3 GB) and well under the 1 GiB
#: files the bounded-read tests make, so a whole read of one cannot succeed
ULIMIT_KB = 700_000


def capped(
    bundle: Bundle,
    args: str,
    *,
    input: str | None = None,
    stdin: object = subprocess.DEVNULL,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``ouro --bundle B ARGS`` as a process under ``ulimit -v`` (an unbounded read
    grows until the kernel refuses it): ``input`` is its stdin text, else ``stdin``."""
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    env["PYTHONPATH"] = str(REPO)
    script = (
        f"ulimit -v {ULIMIT_KB} && exec {sys.executable} -m ouro.cli --bundle {bundle.root} {args}"
    )
    return subprocess.run(
        ["bash", "-c", script],
        input=input,
        stdin=None if input is not None else stdin,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,  # a guard against a hang, not an assertion on speed
    )


def run_ouro(
    *args: str,
    bundle: Bundle | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    check: bool = False,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI the way agents call it: ``main(argv)`` with stdin, stdout,
    stderr, the environment and the exit status of a process.

    By default it runs in this process (the same ``ouro.cli.main`` entry, fast
    paths included): a subprocess per call made the default suite minutes long
    and adds nothing to what these tests check. ``process=True`` runs
    ``python -m ouro.cli`` for real, for tests about the process itself
    (start-up, imports, signals, concurrency).
    """
    argv = (["--bundle", str(bundle.root)] if bundle is not None else []) + list(args)
    if not process:
        proc = _run_in_process(argv, input=input, env=env)
    else:
        full_env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
        if env:
            full_env.update(env)
        proc = subprocess.run(
            [sys.executable, "-m", "ouro.cli", *argv],
            capture_output=True,
            text=True,
            input=input,
            env=full_env,
            timeout=120,
        )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"ouro {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def _run_in_process(
    argv: list[str], *, input: str | None, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    import io
    import traceback

    from ouro.cli import main

    saved_env = dict(os.environ)
    saved_io = (sys.stdin, sys.stdout, sys.stderr)
    out, err = io.StringIO(), io.StringIO()
    for key in ("OURO_BUNDLE", "OURO_DEBUG"):
        os.environ.pop(key, None)
    os.environ.update(env or {})
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(input or ""), out, err
    code: int
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            err.write(f"{exc.code}\n")
            code = 1
    except Exception:  # what the interpreter does with an uncaught error: exit 1
        err.write(traceback.format_exc())
        code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_io
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["ouro", *argv], code, out.getvalue(), err.getvalue())


def ouro_json(*args: str, bundle: Bundle | None = None, **kw: Any) -> Any:
    proc = run_ouro(*args, "--json", bundle=bundle, **kw)
    assert proc.stdout.strip(), f"no stdout; stderr: {proc.stderr}"
    return json.loads(proc.stdout)


def record_snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """``snapshot`` of the record only: a read may heal a machine-local cache under
    ``state/`` (docs/concepts.md, "Derived state"), never change anything else."""
    return snapshot(root, state=False)


def snapshot(root: Path, *, state: bool = True) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime_ns under root (to prove a write refused, or a
    read, changed nothing). A symlink is recorded by its target text and its own
    mtime (never followed). ``state=False`` leaves ``state/`` out (``record_snapshot``)."""
    out: dict[str, tuple[bytes, int]] = {}
    top = os.path.join(root, "state")
    for dirpath, _dirs, files in os.walk(root):
        if not state and (dirpath == top or dirpath.startswith(top + os.sep)):
            continue
        for name in files:
            p = Path(dirpath) / name
            st = p.lstat()
            data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
            out[str(p.relative_to(root))] = (data, st.st_mtime_ns)
    return out


class CliResult:
    """What a CLI run printed and its exit status (``cli_run``)."""

    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.exit_code = proc.returncode
        self.output = proc.stdout
        self.stderr = proc.stderr

    def __repr__(self) -> str:
        return f"CliResult({self.exit_code}, {self.output!r}, {self.stderr!r})"


def cli_run(args: list[str], *, input: str | None = None, **kw: Any) -> CliResult:
    """``ouro ARGS`` in this process (the one ``ouro.cli`` entry), as a result object."""
    return CliResult(run_ouro(*args, input=input, **kw))
