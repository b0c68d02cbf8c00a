"""``ouro sync init`` and ``ouro sync clone``; ``ouro sync [--pull-only|--push-only]``,
``sync status|resolve|habit`` are the library's ``b.sync`` verbs (``ouro.api.sync``).

Progress
lines (``ouro.progress.steps``) go to stderr, only when the ``progress``
setting allows (default: stderr is a terminal) and never under ``--json``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ouro.api.sync import Sync
from ouro.spec import P

if TYPE_CHECKING:
    from ouro.api import Bundle as Library

_INTERVAL = "How often sync should run (default 30m)."


def init(**arguments: Any) -> dict[str, Any]:
    """``b.sync.init`` (its signature and docstring are the command's), on the bundle
    this run names; a git clone with nothing checked out is told what to run instead."""
    return _bundle_or_why().sync.init(**arguments)


init.__wrapped__ = Sync.init  # type: ignore[attr-defined]  # the spec and help: ouro.spec


def _bundle_or_why() -> Library:
    """The bundle; for a git clone with nothing checked out, say what to run instead."""
    import ouro.api
    from ouro.bundle import ENV_VAR
    from ouro.cli.common import bundle_option
    from ouro.errors import BundleNotFound

    try:
        return ouro.api.open(bundle_option())
    except BundleNotFound as exc:
        from ouro.sync.clone import explain_unopened

        named = bundle_option() or os.environ.get(ENV_VAR)
        folder = Path(os.path.abspath(Path(named).expanduser())) if named else Path.cwd()
        raise explain_unopened(folder, exc) from None


def clone(
    url: Annotated[str, P("The remote holding the bundle.")],
    path: Annotated[str, P("Folder to clone into (new or empty).")],
    *,
    branch: Annotated[str | None, P("The remote branch holding the bundle.")] = None,
    interval: Annotated[str, P(_INTERVAL)] = "30m",
) -> dict[str, Any]:
    """Join a bundle from its remote: clone it into PATH (new or empty) and set up sync.

    Checks out the branch holding bundle.json whatever the remote's HEAD names.
    """
    from ouro.derived import regenerate
    from ouro.sync.clone import clone as cloning

    return cloning(url, Path(path), branch=branch, interval=interval, regenerate=regenerate)
