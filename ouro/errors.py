"""The one error type of ouro.

Every ``OuroError`` carries a message that says what went wrong and a hint
that says what to do next. Only the CLI edge (``ouro.cli``) turns an error into
an exit code; the MCP server turns it into a tool error.
"""

from __future__ import annotations


class OuroError(Exception):
    """A failure the caller can act on. ``hint`` names the next step."""

    kind = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_json(self) -> dict[str, str | None]:
        return {"type": self.kind, "message": self.message, "hint": self.hint}

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class BundleNotFound(OuroError):
    kind = "bundle_not_found"


class BundleExists(OuroError):
    kind = "bundle_exists"


class LegacyLayout(OuroError):
    kind = "legacy_layout"


class NewerLayout(OuroError):
    """``bundle.json`` names a layout made by a newer ouro: refused, never guessed at."""

    kind = "newer_layout"


class InvalidLocator(OuroError):
    kind = "invalid_locator"


class OutsideBundle(InvalidLocator):
    """A write whose path resolves (through a symlink) outside its bundle."""

    kind = "outside_bundle"


class StorageError(OuroError):
    """The operating system refused a read or write (disk full, permission, I/O).

    The message names the path and says whether anything was written.
    """

    kind = "storage"


class InvalidInput(OuroError):
    """Bad input: the message names the field, file and line where known."""

    kind = "invalid_input"


class NotFound(OuroError):
    kind = "not_found"


class Conflict(OuroError):
    """The write would contradict existing state (duplicate, lease held, ...)."""

    kind = "conflict"


class LockTimeout(OuroError):
    kind = "lock_timeout"


class CorruptFile(OuroError):
    """A file on disk cannot be read as its contract says. It is left untouched."""

    kind = "corrupt_file"


class IndexUnavailable(OuroError):
    kind = "index_unavailable"


class ToolDenied(OuroError):
    kind = "tool_denied"
