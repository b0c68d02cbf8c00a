"""``ouro init`` and ``ouro demo``."""

from __future__ import annotations

from pathlib import Path

import click

from ouro.bundle import Bundle
from ouro.cli.common import wants_json, with_json
from ouro.cli.output import emit


@click.command("init")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--agent", help="Agent name recorded in bundle.json (default: folder name).")
@click.option(
    "--link",
    is_flag=True,
    help="Also write a .ouro pointer in the current folder (the project root) naming the "
    "bundle by a relative path, so ouro and its hooks find it from any subfolder. "
    "With an existing bundle at PATH, only writes the pointer.",
)
@with_json
@click.pass_context
def init_cmd(
    ctx: click.Context, path: Path, agent: str | None, link: bool, json_mode: bool
) -> None:
    """Create a new bundle at PATH with the canonical layout (e.g. 'ouro init agent.ouro')."""
    from ouro.bundle import write_pointer

    created = not (link and (path / "bundle.json").is_file())
    bundle = Bundle.init(path, agent=agent) if created else Bundle.open(path)
    meta = bundle.read_meta()
    result: dict[str, object] = {
        "bundle": str(bundle.root),
        "created": created,
        "agent": meta["agent"],
        "layoutVersion": meta["layoutVersion"],
        "pointer": None,
        "pointerWritten": False,
    }
    if link:
        pointer, written = write_pointer(Path.cwd(), bundle.root)
        result["pointer"] = str(pointer)
        result["pointerWritten"] = written
    emit(result, json_mode=wants_json(ctx, json_mode), render=_render_init)


def _render_init(r: dict[str, object]) -> str:
    bundle = Path(str(r["bundle"]))
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


@click.command("demo")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@with_json
@click.pass_context
def demo_cmd(ctx: click.Context, path: Path | None, json_mode: bool) -> None:
    """Walk through what ouro does, on a scratch bundle (a temp dir unless PATH)."""
    from ouro.demo import run_demo

    steps = run_demo(path, echo=None if wants_json(ctx, json_mode) else click.echo)
    if wants_json(ctx, json_mode):
        emit({"steps": steps}, json_mode=True)
