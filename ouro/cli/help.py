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


def command_record(path: Path) -> dict[str, object]:
    """``ouro --json help COMMAND`` (and ``--json COMMAND --help``): the command's help
    as one object -- its name, summary, description, usage, agent tool, arguments,
    options and examples, from the same spec its parser and ``--help`` are built from."""
    entry = entries().get(path)
    name = " ".join(path)
    if entry is None:  # a group: its commands
        return {
            "command": name,
            "group": True,
            "summary": summary(path),
            "usage": " ".join(("ouro", *path, "COMMAND [ARGS]...")),
            "commands": [
                {"name": " ".join((*path, child)), "summary": summary((*path, child))}
                for child in children(path)
            ],
        }
    from ouro.cli.examples import examples_for
    from ouro.cli.parse import flags_of
    from ouro.cli.run import parser_of
    from ouro.spec import spec_of

    parser, _spec, fn = parser_of(entry)
    usage = " ".join(parser.format_usage().split()).removeprefix("Usage: ")
    arguments: list[dict[str, object]] = []
    options: list[dict[str, object]] = []
    for param in spec_of(fn):
        item: dict[str, object] = {"name": param.name, "help": param.p.help, "kind": param.kind}
        choices = param.p.choices() if callable(param.p.choices) else param.p.choices
        if choices:
            item["choices"] = list(choices)
        if param.positional:
            item["required"] = param.required
            arguments.append(item)
            continue
        item["flags"] = flags_of(param)
        if param.required:
            item["required"] = True
        elif param.default is None or isinstance(param.default, str | int | float | bool):
            item["default"] = param.default
        options.append(item)
    from ouro.registry import name_of

    return {
        "command": name,
        "group": False,
        "summary": summary(path),
        "description": description(path),
        "usage": usage,
        "agentTool": name_of(entry.tool) if entry.tool is not None else None,
        "arguments": arguments,
        "options": options,
        "examples": [{"line": f"ouro {line}", "what": what} for line, what in examples_for(path)],
    }


__all__ = ["command_record", "description", "group_help", "is_group", "summary"]
