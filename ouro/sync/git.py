"""The ``git`` command line, run without a shell (the only replication ouro uses).

Every call has a timeout, ``LC_ALL=C`` (messages ouro reads are English),
``GIT_TERMINAL_PROMPT=0`` (a sync from a habit must never wait on a password
prompt) and, when the repository has no committer identity, a fallback one
(``ouro <ouro@HOST>``) given through the environment so nothing in the user's
git config is changed. A failing git call raises ``SyncError`` with git's own
first error line and what to do.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ouro.errors import OuroError

TIMEOUT = 120.0


class SyncError(OuroError):
    """A sync step failed; the bundle is left as the step found it."""

    kind = "sync_failed"


@dataclass
class Git:
    """git, run in ``cwd`` (the bundle root)."""

    cwd: Path
    timeout: float = TIMEOUT
    _env: dict[str, str] | None = field(default=None, repr=False)

    def env(self) -> dict[str, str]:
        if self._env is None:
            env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
            for inherited in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
                env.pop(inherited, None)  # always the bundle's own repository
            self._env = env
            if not self._has_identity(env):
                host = socket.gethostname() or "localhost"
                for who in ("AUTHOR", "COMMITTER"):
                    env.setdefault(f"GIT_{who}_NAME", "ouro")
                    env.setdefault(f"GIT_{who}_EMAIL", f"ouro@{host}")
        return self._env

    def _has_identity(self, env: dict[str, str]) -> bool:
        proc = self._spawn(["config", "--get-regexp", r"^user\.(name|email)$"], env)
        keys = {line.split(" ", 1)[0] for line in proc.stdout.decode(errors="replace").splitlines()}
        return {"user.name", "user.email"} <= keys

    def _spawn(
        self, args: list[str], env: dict[str, str], stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                ["git", *args],
                cwd=self.cwd,
                input=stdin,
                capture_output=True,
                env=env,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise SyncError(
                "git is not installed (not found on PATH)",
                hint="install git; ouro sync runs the git command line",
            ) from None
        except subprocess.TimeoutExpired:
            raise SyncError(
                f"git {' '.join(args[:2])} did not finish within {self.timeout:g}s",
                hint="check the remote is reachable, then run 'ouro sync' again",
            ) from None

    def run(
        self, *args: str, check: bool = True, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        proc = self._spawn(list(args), self.env(), stdin)
        if check and proc.returncode != 0:
            raise SyncError(
                f"git {' '.join(args[:2])} failed: {first_line(proc)}",
                hint="fix what git says, then run 'ouro sync' again (it resumes where it stopped)",
            )
        return proc

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace").strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0

    def blob(self, rev_path: str) -> bytes | None:
        """The bytes of ``REV:PATH`` (or ``:N:PATH`` for an index stage), None if absent."""
        proc = self.run("cat-file", "blob", rev_path, check=False)
        return proc.stdout if proc.returncode == 0 else None

    def lines(self, *args: str) -> list[str]:
        """NUL-separated output (``-z``) as a list of paths."""
        raw = self.run(*args).stdout
        return [p.decode("utf-8", "replace") for p in raw.split(b"\0") if p]

    def git_dir(self) -> Path:
        return Path(self.out("rev-parse", "--absolute-git-dir"))


def first_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    for stream in (proc.stderr, proc.stdout):
        for line in stream.decode("utf-8", "replace").splitlines():
            if line.strip() and not line.startswith("hint:"):
                return line.strip()
    return f"exit status {proc.returncode}"
