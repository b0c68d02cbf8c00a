"""``b.index``: the search index under ``state/index/`` (a cache rebuilt from the files)."""

from __future__ import annotations

from ouro.api._base import Namespace
from ouro.spec import P, verb

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Annotated, Any


class Index(Namespace):
    def _with_vectors(self, result: dict[str, Any], *, compute: bool = True) -> dict[str, Any]:
        """With ``ouro-bundle[semantic]`` installed, the vectors for search by meaning:
        computed (a phase of its own, with its own progress line), or only counted."""
        from ouro import progress
        from ouro.index.semantic import embed_bundle, pending

        root = self.folder.root
        if compute:
            vectors = embed_bundle(root, progress=progress.counter("index vectors", "docs"))
        else:
            vectors = pending(root)
        return {**result, "semantic": vectors} if vectors is not None else result

    @verb
    def sync(self) -> dict[str, Any]:
        """Apply every change under desk/ to the index (cheap when nothing changed), and
        bring every other derived file up to date."""
        from ouro import derived, progress
        from ouro.index.sync import sync

        others = derived.sync(self.folder, skip=("index", "vectors"))  # every other derived file
        report = sync(self.folder, progress=progress.counter("index sync", "files"))
        return self._with_vectors({**report.to_json(), "derived": others})

    @verb
    def rebuild(
        self,
        *,
        no_vectors: Annotated[
            bool,
            P(
                "build the word index only; the vectors for search by meaning are computed "
                "by the next 'ouro index sync' (or a few thousand per search meanwhile)"
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Throw the index away and build it again from the files: the word index (files
        to FTS5 and tables, one transaction), then, with ouro-bundle[semantic] installed, a
        vector for every doc."""
        from ouro import derived, progress
        from ouro.index.sync import rebuild

        others = derived.rebuild(self.folder, skip=("index", "vectors"))  # every other one
        report = rebuild(self.folder, progress=progress.counter("index rebuild", "files"))
        return self._with_vectors({**report.to_json(), "derived": others}, compute=not no_vectors)

    @verb
    def status(self) -> dict[str, Any]:
        """Say whether the index is fresh, stale or missing, and each other derived file
        (writes nothing)."""
        # ouro.derived's checks: ouro.index.sync would pull in the whole write side
        from ouro.derived import index_status

        return index_status(str(self.folder.root))
