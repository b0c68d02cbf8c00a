"""What every namespace of the library shares."""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from ouro.api import Bundle
    from ouro.bundle import Bundle as Folder


class Namespace:
    """A group of verbs (``b.diary``, ``b.desk.task``) bound to one open bundle."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle

    @property
    def folder(self) -> Folder:
        """The low-level bundle (paths, locators)."""
        return self.bundle.folder

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.bundle!r}>"
