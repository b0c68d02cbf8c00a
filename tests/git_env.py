"""git for tests: an identity of its own, and no user or system git config.

A test that runs git must pass on a machine with no global identity and an empty
``HOME`` (CI), and must not pick up a developer's settings (``commit.gpgsign``,
``init.defaultBranch``, hooks paths). ``run_git`` runs git with ``GIT_ENV``:
author and committer set through the environment, ``GIT_CONFIG_GLOBAL`` pointed
at an empty file and ``GIT_CONFIG_NOSYSTEM=1``. (The sync tests keep their own
helper, ``tests/sync_support.py``.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "ouro tests",
    "GIT_AUTHOR_EMAIL": "tests@ouro.invalid",
    "GIT_COMMITTER_NAME": "ouro tests",
    "GIT_COMMITTER_EMAIL": "tests@ouro.invalid",
}


def git_env(**extra: str) -> dict[str, str]:
    """The environment for a test's git: this process's, with the test identity and
    neither the user's nor the system's git config."""
    return {
        **os.environ,
        **IDENTITY,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
        **extra,
    }


def run_git(*args: str, cwd: Path | None = None) -> str:
    """Run ``git ARGS`` (in ``cwd``) with ``git_env()``; its stdout, or AssertionError
    carrying git's stderr."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=git_env(), check=False
    )
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout
