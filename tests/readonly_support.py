"""Run ouro against a bundle that cannot be written, for real.

``ReadOnly.find(tmp)`` picks the first way that works on this machine and says
which (``how``):

1. not root: ``chmod -R a-w`` on the bundle -- writes fail with ``EACCES``;
2. root (where ``chmod`` stops nothing): a read-only bind mount in a private
   mount namespace (``unshare -m`` + ``mount --bind -o ro``) -- ``EROFS``, what
   a read-only disk gives;
3. root without mount namespaces: ``setpriv`` to the ``nobody`` user on a
   ``chmod -R a-w`` copy (this Python must be readable by nobody) -- ``EACCES``.

None of them works: ``find`` returns None and the test skips, saying why.
``run(bundle, commands)`` runs the ``ouro`` command lines one after the other in
one process (``ouro.cli.main``, fast paths included) with the bundle
unwritable, and returns ``[(exit code, stdout, stderr)]``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: runs each command line given as JSON in argv[1] through ``ouro.cli.main``, in this
#: one process (as an MCP server would: caches carry over from call to call)
DRIVER = """
import io, json, sys, traceback
from ouro.cli import main
out = []
real = sys.stdout, sys.stderr
for argv in json.loads(sys.argv[1]):
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:
        traceback.print_exc()
        code = 1
    out.append([code, sys.stdout.getvalue(), sys.stderr.getvalue()])
sys.stdout, sys.stderr = real
print(json.dumps(out))
"""

NOBODY = 65534


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OURO_")}
    repo = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH")]))
    return env


def _works(argv: list[str], cwd: str = "/") -> bool:
    try:
        proc = subprocess.run(argv, capture_output=True, cwd=cwd, env=_env(), timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@dataclass
class ReadOnly:
    how: str
    errno_name: str  # what a write gets: EROFS or EACCES
    _mode: str

    @classmethod
    def find(cls) -> ReadOnly | None:
        if os.geteuid() != 0:
            return cls("chmod -R a-w, as a non-root user", "EACCES", "chmod")
        probe = tempfile.mkdtemp()
        try:
            mounted = _works(
                ["unshare", "-m", "sh", "-c",
                 f"mount --bind -o ro {probe} {probe} && ! touch {probe}/x 2>/dev/null"]
            )  # fmt: skip
        finally:
            shutil.rmtree(probe, ignore_errors=True)
        if mounted:
            return cls("a read-only bind mount (unshare -m; mount --bind -o ro)", "EROFS", "mount")
        if shutil.which("setpriv") and _works(cls._nobody([sys.executable, "-c", "import ouro"])):
            return cls("setpriv to nobody on a chmod -R a-w copy", "EACCES", "setpriv")
        return None

    @staticmethod
    def _nobody(argv: list[str]) -> list[str]:
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]

    def run(self, bundle: Path, commands: list[list[str]]) -> list[tuple[int, str, str]]:
        argv = [sys.executable, "-c", DRIVER, json.dumps(commands)]
        root = str(bundle)
        if self._mode == "mount":
            argv = ["unshare", "-m", "sh", "-c",
                    'mount --bind -o ro "$0" "$0" && cd "$0" && exec "$@"', root, *argv]  # fmt: skip
        elif self._mode == "setpriv":
            argv = self._nobody(argv)
        frozen = self._mode in ("chmod", "setpriv")
        if frozen:
            subprocess.run(["chmod", "-R", "a-w", root], check=True)
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, cwd=root, env=_env(), timeout=600
            )
        finally:
            if frozen:
                subprocess.run(["chmod", "-R", "u+w", root], check=True)
        assert proc.returncode == 0, proc.stderr
        return [tuple(r) for r in json.loads(proc.stdout)]  # type: ignore[misc]

    def place(self, tmp: Path) -> Path:
        """A folder for the bundle that this way can reach (nobody cannot enter a
        root-only pytest temp folder)."""
        if self._mode != "setpriv":
            return tmp
        folder = Path(tempfile.mkdtemp(prefix="ouro-ro-"))
        folder.chmod(0o755)
        return folder
