"""``ouro completion bash|zsh|fish``: a shell completion script.

The script asks ``ouro __complete WORD...`` (the words typed so far, the last
one being completed) for candidates, one per line: the commands one level
down the tree (``ouro.cli.tree``), or a command's options (from the same spec
its parser is built from), or the global options.
"""

from __future__ import annotations

import sys
from typing import Annotated

from ouro.spec import P

SHELLS = ("bash", "zsh", "fish")

_BASH = """\
_ouro_complete() {
    local IFS=$'\\n'
    COMPREPLY=($(ouro __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _ouro_complete ouro
"""

_ZSH = """\
#compdef ouro
_ouro() {
    local -a candidates
    candidates=("${(@f)$(ouro __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    compadd -- $candidates
}
compdef _ouro ouro
"""

_FISH = """\
function __ouro_complete
    set -l words (commandline -opc) (commandline -ct)
    ouro __complete $words[2..-1] 2>/dev/null
end
complete -c ouro -f -a '(__ouro_complete)'
"""


def completion(
    shell: Annotated[str, P("The shell: bash, zsh or fish.", choices=SHELLS)],
) -> int:
    """Print the shell completion script for SHELL (e.g. eval "$(ouro completion bash)")."""
    sys.stdout.write({"bash": _BASH, "zsh": _ZSH, "fish": _FISH}[shell])
    return 0


def candidates(words: list[str]) -> list[str]:
    """What may come next after ``words[:-1]``, starting with ``words[-1]``."""
    from ouro.cli import tree
    from ouro.cli.parse import GLOBALS, flags_of

    *done, current = words or [""]
    path, entry, rest = tree.resolve([w for w in done if not w.startswith("-")])
    found: list[str] = []
    if current.startswith("-"):
        found += [flag.split()[0] for flag, _ in GLOBALS]
        if entry is not None:
            from ouro.spec import spec_of

            found += [f for param in spec_of(entry.function()) for f in flags_of(param)]
            found.append("--help")
    elif not rest:
        found += tree.children(path)
    return sorted({c for c in found if c.startswith(current)})


def complete(words: list[str]) -> int:
    sys.stdout.write("".join(f"{c}\n" for c in candidates(words)))
    return 0
