"""What the front-end command functions share: this run's global options
(``ouro.cli.run.G``), the bundle they name, one-line summaries."""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    pass

if TYPE_CHECKING:
    from ouro.bundle import Bundle


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (a command's one-line summary), never cut mid-word."""
    flat = " ".join(text.split())
    for i, char in enumerate(flat):
        if char in ".!?" and (i + 1 == len(flat) or flat[i + 1] == " "):
            before = flat[:i]
            # not an abbreviation such as "e.g." or "i.e."
            if not before.endswith(("e.g", "i.e", "etc", "vs")):
                return flat[: i + 1]
    return flat


def bundle_option() -> str | None:
    """The global ``--bundle`` of this run, if given."""
    from ouro.cli import run

    return run.G.bundle


def wants_json() -> bool:
    from ouro.cli import run

    return run.G.json


def wants_verbose() -> bool:
    from ouro.cli import run

    return run.G.verbose


def bundle_from(*, allow_legacy: bool = False) -> Bundle:
    """The bundle this run names (``--bundle``, else the usual discovery)."""
    from ouro.bundle import Bundle

    return Bundle.locate(bundle_option(), allow_legacy=allow_legacy)
