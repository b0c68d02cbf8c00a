"""Generate the CLI reference (``docs/cli.md``) from the command tree.

Run ``python -m ouro.cli.reference > docs/cli.md`` after changing a command; a
test fails when the file and the code disagree, so every command and tool is
documented. The reference reads the same data as the parser and ``--help``:
the tree (``ouro.cli.tree``), each command's signature (``ouro.spec``) and
docstring, and the examples (``ouro.cli.examples``). The file is
documentation, not code: nothing reads it.
"""

from __future__ import annotations

from ouro.cli import tree

_HEADER = """# CLI reference

Generated from the code by `python -m ouro.cli.reference > docs/cli.md`
(the command tree, each command's signature and docstring: the same data the
parser and `--help` are built from); a test fails when it drifts.

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
  `desk_task_list`; the seed's record tools keep the seed's names
  (`ouro diary consult` is `consult_diary`, `ouro facts search` is
  `search_facts`, `ouro notes consult` is `consult_notes`). The registry
  derives one from the other, so it holds for every tool.
- **Options from the signature.** A command's arguments are its library
  method's parameters: positional ones are arguments, keyword-only ones
  `--kebab-case` options; a list repeats its option (named by the singular:
  `--tag a --tag b`); a flag whose default is on is turned off with `--no-…`;
  a long text also takes `--<name>-file PATH` (`-` reads stdin).
- **The search verbs agree.** `ouro desk search`, `ouro diary consult`,
  `ouro facts search` and `ouro notes consult` all take an optional `QUERY`
  (words that must all match, `"quoted phrases"`, `prefix*`; no query lists
  the newest first) and `--limit N`; each adds only its own filters.
- **Human output.** A write prints one line: what happened, the id, where
  (`recorded fact f-01… → desk/_record/diary/facts.jsonl#f-01…`). Lists are
  tables with a header. Statuses are coloured only on a terminal, never when
  `NO_COLOR` is set or the `color` setting is `never`. Times are relative
  (`3h ago`) unless the `dates` setting is `absolute`. `--verbose` (anywhere on
  the line) prints the full record as text; `--json` prints the object itself.
- **Progress.** Long work (index rebuild and first build, migrate, drills, sync)
  reports progress on stderr, only when stderr is a terminal, never with
  `--json` (the `progress` setting can force it on or off).
- **Concepts.** `ouro help` lists the topics (bundle, arc, desk, locators,
  drills, exit-codes, completion, config); `ouro help TOPIC` explains one;
  `ouro help desk search` is `ouro desk search --help`. Every command's `--help`
  ends with examples (a test runs them all against a scratch bundle). With
  `--json`, help is one JSON object too: `ouro --json help` is `{"topics",
  "commands"}` (each `{"name", "summary"}`), `ouro --json help TOPIC` is
  `{"topic", "summary", "text"}`, and `ouro --json help COMMAND` (the same as
  `ouro --json COMMAND --help`) is `{"command", "group", "summary",
  "description", "usage", "agentTool", "arguments", "options", "examples"}`
  (a group: `{"command", "group": true, "summary", "usage", "commands"}`);
  each argument and option has its `name`, `help`, `kind` and, where it
  applies, `flags`, `choices`, `default` or `required`. An unknown topic is
  the usual JSON usage error (exit 2).

## Exit codes

The same for every command, and the same with `--json` (where an error object
also carries it as `exitCode`). A test checks it over every command.

{exit_table}

Host hooks (`ouro hook claude|codex`) are the exception by design: they fail
open, exit 0, and say what is wrong in one line the host shows.

## Settings

`ouro config list --show-origin` shows every setting, its value and where it
came from. Sources, lowest precedence first: built-in default < global
(`$XDG_CONFIG_HOME/ouro/config.toml`, else `~/.config/ouro/config.toml`) <
bundle (`bundle.json`) < project (`ouro.toml` in the folder of the
project's bundle pointer, `.ouro` or `ouro.toml`, found walking up) <
environment (`OURO_<KEY>`) < command line (`--config KEY=VALUE`).
`ouro config set KEY VALUE` writes bundle.json, or the global file with
`--global`, or the project file with `--project` (created beside a `.ouro`
pointer with the same `bundle` path, so it stays a valid pointer);
writes are atomic under a lock. A file that cannot be parsed is reported with
its path (`config get|list` exit 3); `config set` copies it aside to
`<file>.bad-<stamp>` before writing a fresh one, and says so.

{settings_table}

## Shell completion

```sh
# bash
echo 'eval "$(ouro completion bash)"' >> ~/.bashrc
# zsh
echo 'eval "$(ouro completion zsh)"' >> ~/.zshrc
# fish
ouro completion fish > ~/.config/fish/completions/ouro.fish
```

# Commands
"""


def _usage(path: tuple[str, ...]) -> str:
    from ouro.cli.run import parser_of

    parser = parser_of(tree.entries()[path])[0]
    usage = parser.format_usage().strip().removeprefix("Usage: ")
    return " ".join(usage.split())


def _entry(path: tuple[str, ...]) -> str:
    from ouro.cli.examples import examples_for
    from ouro.cli.help import description
    from ouro.cli.parse import flags_of
    from ouro.spec import spec_of

    entry = tree.entries()[path]
    lines = [f"## `ouro {' '.join(path)}`", "", f"    {_usage(path)}", ""]
    text = description(path).strip()
    if text:
        lines += [" ".join(part.split()) + "\n" for part in text.split("\n\n")]
    tool = entry.tool
    if tool is not None:
        from ouro.registry import name_of

        hints = [
            h
            for h, on in (
                ("read-only", tool.read_only),
                ("destructive", tool.destructive),
                ("idempotent", tool.idempotent),
            )
            if on
        ]
        lines += [f"*agent tool* `{name_of(tool)}` ({', '.join(hints) or 'writes'})", ""]
    rows = []
    for param in spec_of(entry.function()):
        flags = flags_of(param)
        if flags:
            shown = ", ".join(f"`{f}`" for f in flags)
            rows.append(f"| {shown} | {param.p.help.replace('|', '/')} |")
    if rows:
        lines += ["| option | meaning |", "|---|---|", *rows, ""]
    shown_examples = examples_for(path)
    if shown_examples:
        lines += ["```sh", *(f"ouro {line}  # {what}" for line, what in shown_examples), "```", ""]
    return "\n".join(lines)


def _header() -> str:
    from ouro.cli.exits import TABLE
    from ouro.config import SETTINGS

    exits = ["| code | meaning | for example |", "|---|---|---|"]
    exits += [f"| {code} | {meaning} | {example} |" for code, meaning, example in TABLE]
    settings = ["| setting | default | environment | meaning |", "|---|---|---|---|"]
    settings += [
        f"| `{s.name}` | {s.default or '-'} | `{s.env}` | {s.description} |"
        for s in SETTINGS.values()
    ]
    return _HEADER.replace("{exit_table}", "\n".join(exits)).replace(
        "{settings_table}", "\n".join(settings)
    )


def render_reference() -> str:
    """The whole of docs/cli.md."""
    return _header() + "\n" + "\n".join(_entry(path) for path in sorted(tree.entries()))


if __name__ == "__main__":
    print(render_reference(), end="")
