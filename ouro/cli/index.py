"""``ouro index sync | rebuild | status``: one library call each, then print."""

from __future__ import annotations

from typing import Any

import click

from ouro.cli.common import bundle_from, wants_json, with_json
from ouro.cli.output import emit


def _render_report(result: dict[str, Any]) -> str:
    lines = [
        f"index {result['state']}: {result['scanned']} files scanned, {result['indexed']} "
        f"indexed, {result['removed']} removed, {result['factsAdded']} facts added "
        f"({result['seconds']}s)"
    ]
    if result.get("semantic"):
        vectors = result["semantic"]
        if "embedded" in vectors:
            lines.append(f"vectors: {vectors['embedded']} computed ({vectors['seconds']}s)")
        else:
            lines.append(
                f"vectors: not computed ({vectors['missing']} docs without one); "
                "'ouro index sync' computes them"
            )
    lines += [f"skipped {p['locator']}:{p['line']}: {p['reason']}" for p in result["problems"]]
    lines += [
        f"{d['name']}: {d['action']} (was {d.get('was', 'unknown')})"
        for d in result.get("derived", ())
    ]
    return "\n".join(lines)


def _with_vectors(result: dict[str, Any], root: Any, *, compute: bool = True) -> dict[str, Any]:
    """The vectors for search by meaning, when ``ouro[semantic]`` is installed:
    computed (a phase of its own, with its own progress line and seconds), or
    with ``compute=False`` only counted."""
    from ouro import progress
    from ouro.index.semantic import embed_bundle, pending

    if compute:
        vectors = embed_bundle(root, progress=progress.counter("index vectors", "docs"))
    else:
        vectors = pending(root)
    return {**result, "semantic": vectors} if vectors is not None else result


@click.command("sync")
@with_json
@click.pass_context
def sync_cmd(ctx: click.Context, json_mode: bool) -> None:
    """Apply every change under desk/ to the index (cheap when nothing changed)."""
    from ouro import derived, progress
    from ouro.index.sync import sync

    bundle = bundle_from(ctx)
    others = derived.sync(bundle, skip=("index", "vectors"))  # every other derived file
    report = sync(bundle, progress=progress.counter("index sync", "files"))
    emit(
        _with_vectors({**report.to_json(), "derived": others}, bundle.root),
        json_mode=wants_json(ctx, json_mode),
        render=_render_report,
    )


@click.command("rebuild")
@click.option(
    "--no-vectors",
    is_flag=True,
    help="Build the word index only; the vectors for search by meaning are computed "
    "by the next 'ouro index sync' (or a few thousand per search meanwhile).",
)
@with_json
@click.pass_context
def rebuild_cmd(ctx: click.Context, no_vectors: bool, json_mode: bool) -> None:
    """Throw the index away and build it again from the files.

    Two phases, each timed in the report: the word index (files to FTS5 and
    tables, one transaction), then, with ouro[semantic] installed, a vector for
    every doc (in batches, with its own progress line)."""
    from ouro import derived, progress
    from ouro.index.sync import rebuild

    bundle = bundle_from(ctx)
    others = derived.rebuild(bundle, skip=("index", "vectors"))  # every other derived file
    report = rebuild(bundle, progress=progress.counter("index rebuild", "files"))
    emit(
        _with_vectors({**report.to_json(), "derived": others}, bundle.root, compute=not no_vectors),
        json_mode=wants_json(ctx, json_mode),
        render=_render_report,
    )


@click.command("status")
@with_json
@click.pass_context
def status_cmd(ctx: click.Context, json_mode: bool) -> None:
    """Say whether the index is fresh, stale or missing (writes nothing)."""
    # ouro.derived's checks: ouro.index.sync would pull in the whole write side.
    # (the CLI fast path answers the plain forms the same way: ouro.cli.fast)
    from ouro.derived import index_status, render_status

    result = index_status(str(bundle_from(ctx).root))
    emit(result, json_mode=wants_json(ctx, json_mode), render=render_status)
