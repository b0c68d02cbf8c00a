"""``ouro workbench build OUT/``: the same pages as a static, self-contained site.

Contract:
- OUT gets ``index.html`` (Now) and ``<page>.html`` for the other pages, plus
  ``<page>-N.html`` for further pages of paged lists (up to
  ``STATIC_PAGES`` each; the served workbench pages on without a limit);
- every page carries its styles inline and its CSP in a ``<meta>``; no script,
  no network, no file outside OUT: it opens from ``file://``;
- OUT must be outside the bundle (the bundle is only read) and either new,
  empty, or a previous build (it holds ``.ouro-workbench``); files of a
  previous build are replaced, each atomically;
- it writes nothing into the bundle.
"""

from __future__ import annotations

import os
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.store.atomic import atomic_write_text
from ouro.workbench.app import Workbench
from ouro.workbench.pages import PAGES, Query
from ouro.workbench.render import STATIC_PAGES

MARKER = ".ouro-workbench"
#: pages whose context says whether an older page exists, and where
PAGED = {
    "timeline": lambda c: bool(c["more"]),
    "claims": lambda c: bool(c["more"]),
    "recovery": lambda c: bool(c["history"]["more"]),
    "record": lambda c: bool(c["facts"] and c["facts"]["more"]),
}


def _check_out(bundle: Bundle, out: Path) -> None:
    root = Path(os.path.realpath(bundle.root))
    target = Path(os.path.realpath(out))
    if target == root or root in target.parents:
        raise InvalidInput(
            f"OUT {out} is inside the bundle {bundle.root}",
            hint="build the site outside the bundle; the workbench never writes into it",
        )
    if target.exists():
        if not target.is_dir():
            raise InvalidInput(f"OUT {out} is not a folder", hint="name a new or empty folder")
        if any(target.iterdir()) and not (target / MARKER).exists():
            raise InvalidInput(
                f"OUT {out} is not empty and is not a previous workbench build",
                hint="name a new or empty folder",
            )


def build_site(bundle: Bundle, out: Path) -> list[str]:
    """Write the static site into ``out``; returns the file names written."""
    _check_out(bundle, out)
    out.mkdir(parents=True, exist_ok=True)
    bench = Workbench(bundle, served=False)
    written: list[str] = []
    for name in PAGES:
        page = 1
        while True:
            html, context = bench.render_with_context(name, Query(page=page))
            base = "index" if name == "now" else name
            file_name = f"{base}.html" if page == 1 else f"{base}-{page}.html"
            atomic_write_text(out / file_name, html)
            written.append(file_name)
            more = PAGED.get(name)
            if more is None or not more(context) or page >= STATIC_PAGES:
                break
            page += 1
    atomic_write_text(out / MARKER, "a static build of the ouro workbench\n")
    return written
