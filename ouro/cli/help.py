"""Help text built from the command tree: a group's listing and each command's
one-line summary (the first sentence of its description)."""

from __future__ import annotations

from ouro.cli.common import first_sentence
from ouro.cli.parse import global_lines, wrap
from ouro.cli.tree import GROUP_HELP, Path, children, entries, is_group


def description(path: Path) -> str:
    """The whole description of a command or group."""
    entry = entries().get(path)
    if entry is None:
        return GROUP_HELP.get(path, "")
    from ouro.spec import description as described

    return described(entry.function())


def summary(path: Path) -> str:
    """A command's (or group's) one-line summary: its first sentence."""
    text = description(path) if path in entries() else GROUP_HELP.get(path, "")
    return first_sentence(text)


def group_help(path: Path) -> str:
    """What ``ouro GROUP --help`` prints."""
    prog = " ".join(("ouro", *path))
    lines = [f"Usage: {prog} [OPTIONS] COMMAND [ARGS]...", ""]
    text = GROUP_HELP.get(path) or (description(path) if path in entries() else "")
    if text:
        lines += ["  " + line if line else "" for line in wrap(text, 96).splitlines()]
        lines.append("")
    if not path:
        lines.append("Options:")
        lines += global_lines()
        lines += [f"  {'--version':<20}Print the version and exit.", ""]
    names = children(path)
    width = max((len(n) for n in names), default=0)
    lines.append("Commands:")
    for name in names:
        child = (*path, name)
        lines.append(f"  {name:<{width}}  {summary(child)}")
    return "\n".join(lines)


__all__ = ["description", "group_help", "is_group", "summary"]
