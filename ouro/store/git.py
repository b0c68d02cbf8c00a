"""The ``git`` command line, run without a shell (the only replication ouro uses).

Contract:
- A ``Git(root)`` is pinned to the repository of the folder ``root`` and
  nothing else: every call runs with ``GIT_DIR=<root>/.git`` and
  ``GIT_WORK_TREE=<root>``, so git never walks up into an enclosing project's
  repository (a missing ``<root>/.git`` is an error, never a fall-through).
  ``Git.outside(cwd)`` runs the few commands that need no repository (``init``,
  ``clone``) and the read-only probes of an enclosing one.
- Before its first command, a ``Git(root)`` checks that ``<root>/.git`` is the
  folder's own repository (``own_repository_problem``) and refuses
  (``ForeignRepository``) one that is a symlink, a gitfile (a linked worktree, a
  submodule, ``--separate-git-dir``), holds a symlink git would read or write
  through (anywhere in it but the loose objects and the hooks, ``_symlink_in``),
  shares another repository's refs (``commondir``) or objects
  (``objects/info/alternates``), or whose ``core.worktree`` names another
  folder: git would follow each of them out of the folder, and its config,
  index, refs and commits would land in (or come from) that other repository.
- Every ``GIT_*`` variable inherited from the caller is dropped except those
  that only say how to reach a remote, whose identity to commit with, or where
  the user's global config lives (``KEPT``): a hook running inside a project's
  own git hook inherits ``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``
  …, and none of them may redirect ouro.
- No call runs a program the repository's config, the user's global config or
  a git template chose (``GUARD``, ``driver_overrides``): every command gets
  ``-c core.hooksPath=/dev/null`` (no hook is ever found: ``.git/hooks/*``, a
  hooks folder elsewhere), ``core.fsmonitor=false``, signing off (no ``gpg``
  run or prompt), ``protocol.ext.allow=never`` (no ``ext::`` URL runs a
  command), no submodule recursion; every ``filter.<name>`` driver any config
  defines is switched off (``clean``/``smudge``/``process`` empty,
  ``required=false``: the bytes go in and out as they are) and every
  ``merge.<name>.driver`` becomes ``exit 1`` (a conflict, which the merge rules
  finish keeping both versions); ``diff``/``log``/``show`` run with
  ``--no-ext-diff --no-textconv``; ``init``/``clone`` with ``--template=`` (no
  template's hooks or config are copied in). How git reaches a remote is the
  user's and still works: ``core.sshCommand``, ``GIT_SSH_COMMAND``, credential
  helpers, ``url.*.insteadOf``, ``remote.*.uploadpack``.
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
from ouro.store.bounded import open_regular

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


#: config fixed for every command ouro runs (``-c KEY=VALUE``): none of it may
#: make git run a program (see the module docstring)
GUARD: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # hooks are looked up as /dev/null/<name>: never found
    ("core.fsmonitor", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    # the record is committed as it is: a global ignore (``*.json``) would leave
    # claims unsynced, global attributes or CRLF conversion would change its bytes
    ("core.excludesFile", "/dev/null"),
    ("core.attributesFile", "/dev/null"),
    ("core.autocrlf", "false"),
)
#: options inserted after these subcommands (no external diff, no textconv
#: filter, no template copied into a new repository)
_SUBCOMMAND_GUARD = {
    "diff": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "init": ("--template=",),
    "clone": ("--template=",),
}
#: what a configured merge driver is replaced by: the shell git runs commands
#: with exits 1 at once, which git takes as a conflict (a driver git cannot
#: start aborts the whole merge instead)
NO_MERGE_DRIVER = "exit 1"
#: the config keys ``driver_overrides`` reads: the identity and every driver
PROBE = r"^(user\.(name|email)|filter\..+\.(clean|smudge|process)|merge\..+\.driver)$"
_FILTER = re.compile(r"^filter\.(.+)\.(clean|smudge|process)$", re.DOTALL)
_MERGE = re.compile(r"^merge\.(.+)\.driver$", re.DOTALL)


class SyncError(OuroError):
    """A sync step failed; the bundle is left as the step found it."""

    kind = "sync_failed"


class ForeignRepository(SyncError):
    """``<root>/.git`` leads out of the folder; refused before any git command ran."""

    kind = "foreign_repository"


def clean_env() -> dict[str, str]:
    """The caller's environment without the GIT_* variables that could redirect git."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    return env


def driver_overrides(keys: list[str]) -> list[tuple[str, str]]:
    """The ``-c`` settings that switch off every filter and merge driver among the
    config ``keys`` git listed (``PROBE``); a name ``-c`` cannot carry is refused."""
    filters: dict[str, None] = {}
    merges: dict[str, None] = {}
    for key in keys:
        found = _FILTER.match(key)
        if found:
            filters[found.group(1)] = None
        found = _MERGE.match(key)
        if found:
            merges[found.group(1)] = None
    for name in (*filters, *merges):
        if "=" in name:  # '-c' splits at the first '=': it could not name this driver
            raise SyncError(
                f"git config defines a driver named {name!r}, which ouro cannot switch off "
                "for its commands (its name holds '=')",
                hint="rename or remove that filter/merge driver in your git config",
            )
    out: list[tuple[str, str]] = []
    for name in filters:
        out += [(f"filter.{name}.{key}", "") for key in ("clean", "smudge", "process")]
        out.append((f"filter.{name}.required", "false"))
    out += [(f"merge.{name}.driver", NO_MERGE_DRIVER) for name in merges]
    return out


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


#: (what is wrong with ``<root>/.git``, what to do about it)
Problem = tuple[str, str]


def _symlink_in(dot: Path) -> Path | None:
    """The first symlink inside the git directory ``dot`` (its entries, then every
    folder below: refs, logs, info …), or None.

    The loose objects are not listed (there can be a hundred thousand): only
    whether a fan-out folder of ``objects/`` is itself a symlink. Nor are the
    hooks (ouro runs none: a hook linked from a project's scripts stays as it
    is), though a symlinked ``hooks`` folder is refused like any entry."""
    stack = [str(dot)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue  # unreadable: git reports it itself
        top = folder == str(dot)
        fan_out = folder == os.path.join(dot, "objects")
        for entry in entries:
            if entry.is_symlink():
                return Path(entry.path)
            skip = (top and entry.name == "hooks") or (fan_out and len(entry.name) == 2)
            if entry.is_dir(follow_symlinks=False) and not skip:
                stack.append(entry.path)
    return None


def _shape_problem(dot: Path) -> Problem | None:
    """What makes ``dot`` (``<root>/.git``) lead elsewhere, by the file system alone."""
    away = (
        f"move {dot} out of the folder ('ouro sync init' then gives it a repository of its "
        "own), or join the bundle's remote in a new folder: ouro sync clone URL PATH"
    )
    if dot.is_symlink():
        return f"{dot} is a symlink (to {os.readlink(dot)}): git would write where it points", away
    if dot.is_file():
        try:
            fd = open_regular(dot)  # a FIFO is no file: it never gets here, nor blocks
            try:
                head = os.read(fd, 512)
            finally:
                os.close(fd)
            target = head.decode("utf-8", "replace").strip()
        except OSError as exc:
            target = f"unreadable: {exc.strerror}"
        return (
            f"{dot} is a gitfile ({target[:200]}), not a repository: the repository it names "
            "lives outside the folder (a linked worktree, a submodule or --separate-git-dir)",
            away,
        )
    if os.path.lexists(dot) and not dot.is_dir():  # a FIFO, a socket, a device
        return f"{dot} is neither a folder nor a gitfile, so not a repository", (
            f"move {dot} out of the folder, then run 'ouro sync init'"
        )
    if not dot.is_dir():
        return f"there is no git repository at {dot}", "run 'ouro sync init' first"
    link = _symlink_in(dot)
    if link is not None:
        return (
            f"{link} is a symlink (to {os.readlink(link)}): git would read or write through it",
            f"replace {link} with a copy of what it points to, or {away}",
        )
    if (dot / "commondir").exists():
        return f"{dot} has a commondir file: it shares the refs of another repository", away
    for name in ("alternates", "http-alternates"):
        if os.path.lexists(dot / "objects" / "info" / name):
            return (
                f"{dot / 'objects' / 'info' / name} names another repository's objects: git "
                "would read (and push) objects from outside the folder",
                f"copy them in and drop the file (git --git-dir={dot} repack -a -d, then "
                f"remove {dot / 'objects' / 'info' / name}), or {away}",
            )
    return None


def _problem(root: Path) -> Problem | None:
    dot = root / ".git"
    shape = _shape_problem(dot)
    if shape:
        return shape
    # Only GIT_DIR: git then applies the repository's own core.worktree and says
    # which work tree a git run there by hand would use.
    env = {**clean_env(), "GIT_DIR": str(dot)}
    proc = Git.outside(root)._spawn(["rev-parse", "--absolute-git-dir", "--show-toplevel"], env)
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        return (
            f"{dot} is not a repository with a work tree (git says: {first_line(proc)})",
            f"check it with 'git --git-dir={dot} status', or move it out of the folder",
        )
    if _real(lines[0]) != _real(dot):
        return f"{dot} resolves to the git directory {lines[0]}, outside the folder", (
            f"move {dot} out of the folder"
        )
    if _real(lines[1]) != _real(root):
        return (
            f"{dot / 'config'} sets core.worktree: its work tree is {lines[1]}, not {root}",
            f"unset it (git --git-dir={dot} config --unset core.worktree), then run the "
            "command again",
        )
    return None


def own_repository_problem(root: Path) -> str | None:
    """Why ``<root>/.git`` is not the repository of the folder ``root`` alone, or None.

    Read-only: the file system, then one ``git rev-parse``.
    """
    problem = _problem(root)
    return problem[0] if problem else None


def check_own_repository(root: Path) -> None:
    """Raise ``ForeignRepository`` unless ``<root>/.git`` is the folder's own repository."""
    problem = _problem(root)
    if problem:
        raise ForeignRepository(
            f"refusing to run git in {root}: {problem[0]}; ouro runs git only in the folder's "
            "own repository (a .git directory whose work tree is the folder)",
            hint=problem[1],
        )


@dataclass
class Git:
    """git in the repository at ``cwd/.git`` whose work tree is ``cwd`` (``pinned``)."""

    cwd: Path
    timeout: float = TIMEOUT
    pinned: bool = True
    #: the command a failure's hint says to run again (``ouro sync`` resumes; a
    #: failed ``sync init`` or ``sync clone`` removed what it made)
    again: str = "ouro sync"
    _env: dict[str, str] | None = field(default=None, repr=False)
    #: the ``-c`` settings of this repository's drivers (``driver_overrides``)
    _drivers: list[tuple[str, str]] = field(default_factory=list, repr=False)
    #: git's config names a user.name and a user.email here
    _identity: bool = field(default=False, repr=False)

    @classmethod
    def outside(cls, cwd: Path, *, timeout: float = TIMEOUT, again: str = "ouro sync") -> Git:
        """git run in ``cwd`` with no repository chosen (init, clone, read-only probes)."""
        return cls(cwd, timeout=timeout, pinned=False, again=again)

    def env(self) -> dict[str, str]:
        if self._env is None:
            env = clean_env()
            if self.pinned:
                check_own_repository(self.cwd)  # before any command: nothing may escape
                env["GIT_DIR"] = str(self.cwd / ".git")
                env["GIT_WORK_TREE"] = str(self.cwd)
            keys = self._config_keys(env)
            self._drivers = driver_overrides(keys)
            self._identity = {"user.name", "user.email"} <= set(keys)
            self._env = env
            if self.pinned and not self._identity:
                host = socket.gethostname() or "localhost"
                for who in ("AUTHOR", "COMMITTER"):
                    env.setdefault(f"GIT_{who}_NAME", "ouro")
                    env.setdefault(f"GIT_{who}_EMAIL", f"ouro@{host}")
        return self._env

    def _config_keys(self, env: dict[str, str]) -> list[str]:
        """The identity and driver keys (``PROBE``) git's config holds here (reading
        config runs no program)."""
        proc = self._spawn(["config", "-z", "--get-regexp", PROBE], env)
        return [
            entry.split(b"\n", 1)[0].decode("utf-8", "replace")
            for entry in proc.stdout.split(b"\0")
            if entry
        ]

    def ensure_identity(self, agent: str) -> bool:
        """Give the repository the agent's identity when git has none; True if written.

        Written to this repository's own config (``git config --local``), so a
        machine with no global identity can still commit, and nothing global changes.
        """
        self.env()
        if self._identity:
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
        guard = [f"{key}={value}" for key, value in (*GUARD, *self._drivers)]
        command = ["git", *(part for item in guard for part in ("-c", item))]
        if args:
            command += [args[0], *_SUBCOMMAND_GUARD.get(args[0], ()), *args[1:]]
        try:
            return subprocess.run(
                command,
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
                hint=f"check the remote is reachable, then run '{self.again}' again",
            ) from None

    def run(
        self, *args: str, check: bool = True, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        proc = self._spawn(list(args), self.env(), stdin)
        if check and proc.returncode != 0:
            raise SyncError(
                f"git {' '.join(args[:2])} failed: {first_line(proc)}",
                hint=f"fix what git says, then run '{self.again}' again"
                + (" (it resumes where it stopped)" if self.again == "ouro sync" else ""),
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
