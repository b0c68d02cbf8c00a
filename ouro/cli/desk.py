"""``ouro diary rebuild-entities`` and ``ouro notes rebuild-manifest``: regenerate
a derived Desk file from its sources (after a git merge or a hand edit)."""

from __future__ import annotations

import click

from ouro.cli.common import bundle_from, wants_json, with_json
from ouro.cli.output import emit


@click.command("rebuild-entities")
@with_json
@click.pass_context
def rebuild_entities_cmd(ctx: click.Context, json_mode: bool) -> None:
    """Regenerate desk/_record/diary/entities.json from facts.jsonl."""
    from ouro.derived import after_write
    from ouro.desk.record import entities_path, rebuild_entities

    bundle = bundle_from(ctx)
    result = rebuild_entities(bundle)
    after_write(bundle, [entities_path(bundle)])
    emit(result, json_mode=wants_json(ctx, json_mode))


@click.command("rebuild-manifest")
@with_json
@click.pass_context
def rebuild_manifest_cmd(ctx: click.Context, json_mode: bool) -> None:
    """Regenerate desk/_record/notes/.index.json from the note files."""
    from ouro.derived import after_write
    from ouro.desk.notes import manifest_path, regenerate_manifest

    bundle = bundle_from(ctx)
    entries, problems = regenerate_manifest(bundle)
    after_write(bundle, [manifest_path(bundle)])
    emit({"notes": len(entries), "problems": problems}, json_mode=wants_json(ctx, json_mode))
