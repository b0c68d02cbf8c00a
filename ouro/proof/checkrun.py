"""Running a declared check like a CI step, and which checks may run unasked.

``run_check(bundle, command, cwd=…, timeout=…)`` runs one shell command:

- in ``cwd`` (the repository root: ``repo_root`` below, or a claim's own);
- with a scrubbed environment: every variable whose name looks like a secret
  (``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*API_KEY*``, ``*ACCESS_KEY*``,
  ``*PRIVATE_KEY*``, ``*CREDENTIAL*``, ``*AUTH*``, ``*SESSION_KEY*``) and every
  variable whose value contains a ``bundle.json`` redaction literal or a
  credential ``ouro.proof.redact`` recognises is removed (the receipt names the
  removed variables, never their values);
- with stdin closed, in its own process group, killed (the whole group) when
  the timeout passes, which reads as exit status 124;
- and returns a ``CheckRun``: exit status, duration, the digest of the whole
  output (stdout then stderr interleaved as the command wrote them) and a
  redacted tail of it (the last ``TAIL_LINES`` lines, at most ``TAIL_CHARS``
  characters). The output itself is never kept.

The repository root of a bundle is ``bundle.json`` → ``"repoRoot"`` (a path
relative to the bundle folder, or absolute) and defaults to the folder that
contains the bundle.

``check_command(bundle, command)`` is the one rule for storing a check
(claims and tasks): a command holding a value that looks like a credential is
refused, never rewritten.

Trust (``state/trust/checks.json``): a check command written through ouro on
this machine (``claim add --check``, ``desk task add/update --check``) or
confirmed once by the user is trusted for this bundle at this path. Any other
check (a bundle pulled or copied from elsewhere, a hand-edited file) is shown
and must be confirmed (``--yes``, or an interactive yes) before ouro runs it:
``require_trust`` raises ``CheckNotTrusted`` otherwise. Entries are digests of
(bundle path, command), so a copied trust file vouches for nothing elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, OuroError
from ouro.models.hashing import content_hash
from ouro.proof import refs
from ouro.proof.redact import bundle_literals, redact
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.lock import FileLock

DEFAULT_TIMEOUT = 300.0
TIMEOUT_EXIT = 124
TAIL_LINES = 20
TAIL_CHARS = 2000
TRUST_FILE = ("state", "trust", "checks.json")

_SECRET_NAME = re.compile(
    r"(?i)(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION_?KEY)"
)


class CheckNotTrusted(OuroError):
    """A check written elsewhere: the user must read it and confirm before it runs."""

    kind = "confirmation_required"
    #: the input field that confirms (the CLI asks interactively, then sets it)
    confirm_field = "yes"


@dataclass
class CheckRun:
    command: str
    cwd: str
    exit_code: int
    duration_ms: int
    digest: str
    tail: str
    timed_out: bool = False
    scrubbed: list[str] = field(default_factory=list)

    def note(self, timeout: float) -> str | None:
        return f"timed out after {timeout:g}s" if self.timed_out else None

    def to_json(self) -> dict[str, Any]:
        """The run as tool results report it (claim verify, task verify)."""
        return {
            "command": self.command,
            "cwd": self.cwd,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "outputDigest": self.digest,
            "tail": self.tail,
            "timedOut": self.timed_out,
            "envScrubbed": self.scrubbed,
        }


def repo_root(bundle: Bundle) -> Path:
    """The repository the bundle's claims and checks are about (see module doc)."""
    return Path(refs.repo_root(bundle))


def resolve_repo(bundle: Bundle, given: str, *, field: str = "repo") -> str:
    """An absolute, existing folder for a per-claim repository root."""
    if "\x00" in given or not given.strip():
        raise InvalidInput(f"{field}: {given!r} is not a folder path", hint="pass a folder")
    path = Path(os.path.normpath(bundle.root / Path(given).expanduser()))
    if not path.is_dir():
        raise InvalidInput(
            f"{field}: {given!r} is not an existing folder (resolved to {path})",
            hint="a relative path is read from the bundle folder",
        )
    return str(path)


def scrubbed_env(
    bundle: Bundle, env: dict[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The environment without secrets ouro knows about, and the removed names."""
    source = dict(os.environ if env is None else env)
    literals = bundle_literals(bundle)
    keep: dict[str, str] = {}
    removed: list[str] = []
    for name, value in source.items():
        if _SECRET_NAME.search(name) or (value and redact(value, literals) != value):
            removed.append(name)
        else:
            keep[name] = value
    return keep, sorted(removed)


def tail_of(output: bytes, literals: list[str]) -> str:
    text = output.decode("utf-8", errors="replace")
    lines = text.rstrip("\n").splitlines()[-TAIL_LINES:]
    tail = "\n".join(lines)[-TAIL_CHARS:]
    return redact(tail, literals)


_MARKER = re.compile(r"\[redacted:([a-z_]+)\]")


def check_command(bundle: Bundle, command: str | None, *, field: str = "check") -> str | None:
    """The check to store (stripped; None when blank), or ``InvalidInput`` when it
    holds a value that looks like a credential.

    The one rule for claims and tasks: a check is stored and run exactly as
    typed, so one that the redactor (``ouro.proof.redact``, with the bundle's
    literals) would change is refused, never rewritten.
    """
    if command is None or not command.strip():
        return None
    clean = command.strip()
    shown = redact(clean, bundle_literals(bundle))
    if shown == clean:
        return clean
    kinds = sorted(set(_MARKER.findall(shown)))
    where = shown if len(shown) <= 240 else shown[:239] + "…"
    raise InvalidInput(
        f"{field}: the command holds a value that looks like a credential "
        f"({', '.join(kinds)}): {where}; a check is stored and run exactly as typed, "
        "so ouro refuses it rather than store the secret or rewrite the command",
        hint="put the secret in an environment variable and reference it (e.g. $TOKEN; "
        "note that 'claim verify' and 'task verify' remove secret-named variables, so a "
        "check ouro runs itself must read a secret from a file it names), then pass "
        f"{field} again",
    )


def run_check(bundle: Bundle, command: str, *, cwd: Path, timeout: float) -> CheckRun:
    if not cwd.is_dir():
        raise InvalidInput(
            f"the check's working folder {cwd} does not exist",
            hint="set bundle.json repoRoot (or the claim's --repo) to the repository folder",
        )
    env, removed = scrubbed_env(bundle)
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        code = TIMEOUT_EXIT
    duration = int((time.monotonic() - start) * 1000)
    literals = bundle_literals(bundle)
    return CheckRun(
        command=command,
        cwd=str(cwd),
        exit_code=code,
        duration_ms=duration,
        digest=content_hash(output or b""),
        tail=tail_of(output or b"", literals),
        timed_out=timed_out,
        scrubbed=removed,
    )


# --- trust ------------------------------------------------------------------


def _trust_path(bundle: Bundle) -> Path:
    return bundle.root.joinpath(*TRUST_FILE)


def _trust_key(bundle: Bundle, command: str) -> str:
    return content_hash(f"{bundle.root.resolve()}\x00{command}")


def _read_trust(bundle: Bundle) -> dict[str, Any]:
    try:
        data = jsonio.loads(file_bytes(_trust_path(bundle)))
    except (OSError, jsonio.JSONDecodeError):
        return {}  # no trust recorded (or unreadable): every check asks first
    return data if isinstance(data, dict) else {}


def is_trusted(bundle: Bundle, command: str) -> bool:
    entries = _read_trust(bundle).get("checks")
    return isinstance(entries, dict) and _trust_key(bundle, command) in entries


def trust(bundle: Bundle, command: str, *, how: str) -> None:
    """Record that ``command`` may run in this bundle without asking again."""
    if is_trusted(bundle, command):
        return
    with FileLock(bundle.lock_path("trust"), purpose="trust a check"):
        data = _read_trust(bundle)
        entries = data.get("checks")
        entries = dict(entries) if isinstance(entries, dict) else {}
        entries[_trust_key(bundle, command)] = {"how": how, "at": _now()}
        atomic_write_json(_trust_path(bundle), {"schemaVersion": 1, "checks": entries})


def require_trust(bundle: Bundle, command: str, *, owner: str, yes: bool) -> None:
    """Refuse to run a check written elsewhere unless the caller confirmed it."""
    if is_trusted(bundle, command):
        return
    if not yes:
        raise CheckNotTrusted(
            f"{owner}'s check was not written through ouro here; it would run: {command}",
            hint="read the command; if it is safe, rerun with --yes (MCP: yes=true)",
        )
    trust(bundle, command, how="confirmed")


def _now() -> str:
    from ouro.models.clock import utc_now_iso

    return utc_now_iso()
