"""Global options anywhere on the line (standard library only).

``--bundle B`` / ``--bundle=B``, ``--config KEY=VALUE``, ``--json`` and
``--verbose`` are options of the root command, but people type them after the subcommand too (``ouro desk search
x --json --bundle ~/b``). ``hoist_globals`` moves them to the front, before
``ouro.cli.run`` reads them and parses the command, so they mean the same thing
wherever they stand. Nothing after a ``--`` separator is touched, and a lone
``--bundle`` with no value is moved as is (the CLI then says it needs a value).
"""

from __future__ import annotations

GLOBAL_FLAGS = ("--json", "--verbose")
GLOBAL_VALUED = ("--bundle", "--config")


def hoist_globals(argv: list[str]) -> list[str]:
    """``argv`` with every global option moved to the front, in order."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        if arg in GLOBAL_FLAGS or (arg.split("=", 1)[0] in GLOBAL_VALUED and "=" in arg):
            front.append(arg)
        elif arg in GLOBAL_VALUED:
            front.append(arg)
            if i + 1 < len(argv):
                front.append(argv[i + 1])
                i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest
