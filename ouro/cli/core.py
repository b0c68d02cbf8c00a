"""``ouro init`` and ``ouro demo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from ouro.spec import P


def init(
    path: Annotated[str, P("Folder of the new bundle (e.g. agent.ouro).")],
    *,
    agent: Annotated[
        str | None, P("Agent name recorded in bundle.json (default: folder name).")
    ] = None,
    link: Annotated[
        bool,
        P(
            "Also write a .ouro pointer in the current folder (the project root) naming the "
            "bundle by a relative path, so ouro and its hooks find it from any subfolder. "
            "With an existing bundle at PATH, only writes the pointer."
        ),
    ] = False,
    repair: Annotated[
        bool,
        P(
            "Mend the bundle.json of the existing bundle at PATH: set its missing or invalid "
            "fields again (the agent from --agent, else the folder name), keep every other "
            "one, and save the old file under state/backup/ first."
        ),
    ] = False,
) -> dict[str, Any]:
    """Create a new bundle at PATH with the canonical layout (e.g. 'ouro init agent.ouro')."""
    from ouro.bundle import Bundle, write_pointer

    folder = Path(path)
    result: dict[str, Any] = {"pointer": None, "pointerWritten": False}
    if repair:
        result.update(Bundle.repair(folder, agent=agent), created=False)
        bundle = Bundle.open(folder)
    else:
        created = not (link and (folder / "bundle.json").is_file())
        bundle = Bundle.init(folder, agent=agent) if created else Bundle.open(folder)
        meta = bundle.read_meta()
        result.update(
            bundle=str(bundle.root),
            created=created,
            agent=meta["agent"],
            layoutVersion=meta["layoutVersion"],
        )
    if link:
        pointer, written = write_pointer(Path.cwd(), bundle.root)
        result["pointer"] = str(pointer)
        result["pointerWritten"] = written
    return result


def render_init(r: dict[str, object]) -> str:
    bundle = Path(str(r["bundle"]))
    if "repaired" in r:
        if not r["repaired"]:
            return f"bundle.json of {bundle} is valid: nothing to repair (agent {r['agent']!r})"
        changed = ", ".join(str(f) for f in r["changed"])  # type: ignore[attr-defined]
        return (
            f"repaired {bundle}/bundle.json: set {changed} (agent {r['agent']!r}); "
            f"the old file is {bundle}/{r['backup']}"
        )
    lines = [
        f"created bundle {bundle} for agent {r['agent']!r}"
        if r["created"]
        else f"bundle {bundle} already exists (agent {r['agent']!r})"
    ]
    if r["pointer"]:
        verb = "wrote" if r["pointerWritten"] else "kept"
        lines.append(
            f"{verb} {r['pointer']}: ouro finds the bundle from {Path(str(r['pointer'])).parent} and every subfolder"
        )
        lines.append("next: 'ouro hook install claude' or 'ouro hook install codex' in this folder")
    elif bundle.parent == Path.cwd().absolute() and bundle.name.endswith(".ouro"):
        lines.append(
            "ouro finds it from this folder (the one *.ouro folder here); to find it from "
            f"subfolders too, run 'ouro init {bundle.name} --link'"
        )
    else:
        lines.append(
            f"next: run 'ouro init {bundle} --link' in your project folder, or "
            f"export OURO_BUNDLE={bundle}"
        )
    return "\n".join(lines)


def demo(
    path: Annotated[str | None, P("Folder for the scratch bundle (default: a temp dir).")] = None,
) -> dict[str, Any] | None:
    """Walk through what ouro does, on a scratch bundle (a temp dir unless PATH)."""
    from ouro.cli.common import wants_json
    from ouro.demo import run_demo

    def echo(line: str) -> None:
        sys.stdout.write(line + "\n")

    from ouro.cli.render import text

    steps = run_demo(Path(path) if path else None, echo=None if wants_json() else echo, show=text)
    return {"steps": steps} if wants_json() else None
