"""The ``git`` command line, run without a shell (the only replication ouro uses).

Contract:
- A ``Git(root)`` is pinned to the repository of the folder ``root`` and
  nothing else: every call runs with ``GIT_DIR=<root>/.git`` and
  ``GIT_WORK_TREE=<root>``, so git never walks up into an enclosing project's
  repository (a missing ``<root>/.git`` is an error, never a fall-through).
  ``Git.outside(cwd)`` runs the few commands that need no repository (``init``,
  ``clone``) and the read-only probes of an enclosing one.
- Every ``GIT_*`` variable inherited from the caller is dropped except those
  that only say how to reach a remote, whose identity to commit with, or where
  the user's global config lives (``KEPT``): a hook running inside a project's
  own git hook inherits ``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``
  …, and none of them may redirect ouro.
- Every call has a timeout, ``LC_ALL=C`` (messages ouro reads are English) and
  ``GIT_TERMINAL_PROMPT=0`` (a sync from a habit must never wait on a password
  prompt). A repository with no committer identity gets one through the
  environment (``ouro <ouro@HOST>``); a bundle's own repository gets the agent's
  (``ensure_identity``, written to that repository's config only, never global).
- A failing call raises ``SyncError`` with git's own first error line and what
  to do.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ouro.errors import OuroError

TIMEOUT = 120.0
#: Inherited GIT_* variables that cannot point git at another repository.
KEPT = frozenset(
    {
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSH_VARIANT",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_SSL_NO_VERIFY",
        "GIT_SSL_CAINFO",
        "GIT_SSL_CAPATH",
        "GIT_SSL_CERT",
        "GIT_SSL_KEY",
        "GIT_HTTP_USER_AGENT",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    }
)


class SyncError(OuroError):
    """A sync step failed; the bundle is left as the step found it."""

    kind = "sync_failed"


def clean_env() -> dict[str, str]:
    """The caller's environment without the GIT_* variables that could redirect git."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    return env


@dataclass
class Git:
    """git in the repository at ``cwd/.git`` whose work tree is ``cwd`` (``pinned``)."""

    cwd: Path
    timeout: float = TIMEOUT
    pinned: bool = True
    _env: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def outside(cls, cwd: Path, *, timeout: float = TIMEOUT) -> Git:
        """git run in ``cwd`` with no repository chosen (init, clone, read-only probes)."""
        return cls(cwd, timeout=timeout, pinned=False)

    def env(self) -> dict[str, str]:
        if self._env is None:
            env = clean_env()
            if self.pinned:
                env["GIT_DIR"] = str(self.cwd / ".git")
                env["GIT_WORK_TREE"] = str(self.cwd)
            self._env = env
            if self.pinned and not self._has_identity(env):
                host = socket.gethostname() or "localhost"
                for who in ("AUTHOR", "COMMITTER"):
                    env.setdefault(f"GIT_{who}_NAME", "ouro")
                    env.setdefault(f"GIT_{who}_EMAIL", f"ouro@{host}")
        return self._env

    def _has_identity(self, env: dict[str, str]) -> bool:
        proc = self._spawn(["config", "--get-regexp", r"^user\.(name|email)$"], env)
        keys = {line.split(" ", 1)[0] for line in proc.stdout.decode(errors="replace").splitlines()}
        return {"user.name", "user.email"} <= keys

    def ensure_identity(self, agent: str) -> bool:
        """Give the repository the agent's identity when git has none; True if written.

        Written to this repository's own config (``git config --local``), so a
        machine with no global identity can still commit, and nothing global changes.
        """
        if self._has_identity(self.env()):
            return False
        name = re.sub(r"[<>\n\r]", "", agent).strip() or "ouro"
        host = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname()) or "localhost"
        email = re.sub(r"[^A-Za-z0-9._-]", "-", name) + f"@{host}"
        self.run("config", "--local", "user.name", name)
        self.run("config", "--local", "user.email", email)
        self._env = None  # the fallback identity in the environment is not needed now
        return True

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
