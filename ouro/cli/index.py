"""``ouro index sync | rebuild | status``: one library call each, then print."""

from __future__ import annotations

from typing import Annotated, Any

from ouro.spec import P


def render_report(result: dict[str, Any]) -> str:
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


def sync() -> dict[str, Any]:
    """Apply every change under desk/ to the index (cheap when nothing changed)."""
    from ouro import progress
    from ouro.cli.common import bundle_from
    from ouro.index.sync import sync as syncing

    bundle = bundle_from()
    report = syncing(bundle, progress=progress.counter("index sync", "files"))
    return _with_vectors(report.to_json(), bundle.root)


def rebuild(
    *,
    no_vectors: Annotated[
        bool,
        P(
            "Build the word index only; the vectors for search by meaning are computed "
            "by the next 'ouro index sync' (or a few thousand per search meanwhile)."
        ),
    ] = False,
) -> dict[str, Any]:
    """Throw the index away and build it again from the files.

    Two phases, each timed in the report: the word index (files to FTS5 and
    tables, one transaction), then, with ouro[semantic] installed, a vector for
    every doc (in batches, with its own progress line)."""
    from ouro import progress
    from ouro.cli.common import bundle_from
    from ouro.index.sync import rebuild as rebuilding

    bundle = bundle_from()
    report = rebuilding(bundle, progress=progress.counter("index rebuild", "files"))
    return _with_vectors(report.to_json(), bundle.root, compute=not no_vectors)


def status() -> dict[str, Any]:
    """Say whether the index is fresh, stale or missing (writes nothing)."""
    # ouro.index.state directly: ouro.index.sync pulls in the whole write side.
    from ouro.cli.common import bundle_from
    from ouro.index.state import index_status

    return index_status(str(bundle_from().root))
