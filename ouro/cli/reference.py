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
test fails when it drifts. Every command takes `--json` (one JSON object on
stdout; errors as `{"error": {"type", "message", "hint"}}`) and the global
`--bundle PATH` (default: `$OURO_BUNDLE`, else the nearest `bundle.json`
upwards). Commands marked *agent tool* are also served by `ouro mcp` under the
tool name shown.
"""


def _walk(command: click.Command, ctx: click.Context, path: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None:
                continue
            out.extend(_walk(sub, click.Context(sub, info_name=name, parent=ctx), (*path, name)))
        return out
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
    out.append("\n".join(lines))
    return out


def render_reference() -> str:
    ctx = click.Context(cli, info_name="ouro")
    return _HEADER + "\n" + "\n".join(_walk(cli, ctx, ()))


if __name__ == "__main__":
    print(render_reference(), end="")
