"""Generate the CLI reference (``docs/cli.md``) from the live command tree.

Run ``python -m ouro.cli.reference > docs/cli.md`` after changing a command; a
test fails when the file and the code disagree, so every command and tool is
documented.
"""

from __future__ import annotations

import click

from ouro.cli.app import cli
from ouro.tools import TOOLS

_HEADER = """# CLI reference

Generated from the code by `python -m ouro.cli.reference > docs/cli.md`; a
test fails when it drifts.

## Conventions

- **Global options, anywhere on the line.** `--json` (one JSON object on
  stdout; errors as `{"error": {"type", "message", "hint"}}`) and
  `--bundle PATH` (default: `$OURO_BUNDLE`, else a `.ouro` / `ouro.toml`
  pointer file upwards, else the nearest `bundle.json` upwards, else the one
  `*.ouro` folder in the current directory) mean the same before or after the subcommand:
  `ouro --json desk search x` = `ouro desk search x --json`. Only a `--`
  separator stops them being read as options.
- **One name for CLI and MCP.** Commands marked *agent tool* are also served by
  `ouro mcp`; the tool name is the CLI path joined by `_` (a `-` becomes `_`):
  `ouro claim add` is `claim_add`, `ouro desk task list` is
  `desk_task_list`. The registry derives one from the other, so it holds for
  every tool.
- **The search verbs agree.** `ouro desk search`, `ouro diary search`,
  `ouro facts search` and `ouro notes search` all take an optional `QUERY`
  (words that must all match, `"quoted phrases"`, `prefix*`; no query lists
  the newest first) and `--limit N`; each adds only its own filters.
"""


def _walk(command: click.Command, ctx: click.Context, path: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    if isinstance(command, click.Group):
        if path and command.invoke_without_command:  # runs on its own too (ouro sync)
            out.append(_entry(command, ctx, path))
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None:
                continue
            out.extend(_walk(sub, click.Context(sub, info_name=name, parent=ctx), (*path, name)))
        return out
    out.append(_entry(command, ctx, path))
    return out


def _entry(command: click.Command, ctx: click.Context, path: tuple[str, ...]) -> str:
    tools = {tool.cli: tool for tool in TOOLS}
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## `ouro {' '.join(path)}`", "", f"    ouro {' '.join(path)} {usage}".rstrip(), ""]
    help_text = (command.help or "").split("\n\n(agent tool:")[0].strip()
    if help_text:
        lines += [help_text, ""]
    if path in tools:
        tool = tools[path]
        hints = [
            h
            for h, on in (
                ("read-only", tool.read_only),
                ("destructive", tool.destructive),
                ("idempotent", tool.idempotent),
            )
            if on
        ]
        lines += [f"*agent tool* `{tool.name}` ({', '.join(hints) or 'writes'})", ""]
    rows = []
    for param in command.get_params(ctx):
        if (
            isinstance(param, click.Option)
            and "--help" not in param.opts
            and param.name != "json_mode"
        ):
            rows.append(f"| `{', '.join(param.opts)}` | {(param.help or '').replace('|', '/')} |")
    if rows:
        lines += ["| option | meaning |", "|---|---|", *rows, ""]
    return "\n".join(lines)


def render_reference() -> str:
    ctx = click.Context(cli, info_name="ouro")
    return _HEADER + "\n" + "\n".join(_walk(cli, ctx, ()))


if __name__ == "__main__":
    print(render_reference(), end="")
