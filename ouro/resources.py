"""Where the shipped data lives: ``templates/`` and ``migrations/``.

In a checkout they sit at the top of the repository; in an installed wheel they
are copied to ``ouro/_data/``. Both are found the same way.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"ouro's {name}/ folder is missing from {installed} and {checkout}; reinstall ouro"
    )


def templates_dir() -> Path:
    return _data_dir("templates")


def migrations_dir() -> Path:
    return _data_dir("migrations")


#: Template files kept under another name in the repository: a file named
#: ``.gitignore`` (or ``.gitattributes``) inside ``templates/`` would apply to this repository itself
#: (and hide the template's own ``state/index/`` placeholder from git).
_RENAMED = {"gitignore": ".gitignore", "gitattributes": ".gitattributes"}


def bundle_template() -> list[tuple[Path, str]]:
    """Every file of a new bundle: (template file, bundle-relative destination)."""
    base = templates_dir() / "bundle"
    out = []
    for path in sorted(base.rglob("*")):
        if path.is_file():
            rel = path.relative_to(base).as_posix()
            out.append((path, _RENAMED.get(rel, rel)))
    return out
