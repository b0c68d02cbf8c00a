"""The bundle: locate it, create it, check its layout, name its paths.

Contract:
- ``bundle.json`` at the root marks a bundle (layout version, agent, created-at).
  ``open`` reads it bounded and checks it (``ouro.models.meta``): a layout made
  by a newer ouro is refused (``NewerLayout``: "upgrade ouro"), a damaged or
  invalid file is ``CorruptFile`` naming the file and the field; ouro never
  guesses at it and never rewrites it.
- ``ouro init`` resolves PATH (symlinks, ``..``) before it checks it, copies
  ``templates/bundle/`` (each file written atomically, confined to the new
  bundle) and writes ``bundle.json`` last; it never overwrites an existing
  bundle or a non-empty folder.
- Every command except ``ouro migrate`` refuses a bundle that still has a
  top-level ``journal/``, ``diary/`` or ``notes/`` (the legacy layout).
- Discovery (``Bundle.discover``), first match wins:

  1. ``--bundle PATH``;
  2. ``$OURO_BUNDLE``;
  3. a project pointer file, the nearest walking up from the current
     directory: ``.ouro`` (one line: the bundle's path) or ``ouro.toml``
     (``bundle = "PATH"``), the path relative to the pointer's own folder, so a
     pointer committed with the project works on every checkout;
  4. the nearest ``bundle.json`` walking up (the current directory is inside
     the bundle);
  5. exactly one ``*.ouro`` bundle folder directly inside the current directory
     (the layout ``ouro init agent.ouro`` makes at a project root).

  A pointer that names no bundle is an error naming the pointer file, never a
  silent fall-through to a different bundle; two ``*.ouro`` children are an
  error that lists them.
- Locating and opening are cheap to import: they need only ``ouro.errors``,
  ``ouro.models.meta`` and the store's bounded reader and JSON reader; what
  creates a bundle or a pointer is imported when it runs.
- ``write_pointer(folder, bundle)`` writes ``<folder>/.ouro`` atomically with
  the bundle's path relative to ``folder``; it refuses to replace a pointer
  that names another bundle.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Mapping
from pathlib import Path

from ouro.errors import (
    BundleExists,
    BundleNotFound,
    CorruptFile,
    LegacyLayout,
    NewerLayout,
    OuroError,
)
from ouro.models import meta as meta_shape
from ouro.store.bounded import read_bytes, read_text
from ouro.store.jsonio import JSONDecodeError, loads

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

if TYPE_CHECKING:
    from ouro.store.locator import Locator
# writing (init, pointers) and locators import their modules when used: a
# read command pays only for what reading needs

LAYOUT_VERSION = meta_shape.LAYOUT_VERSION
LEGACY_ROOTS = ("journal", "diary", "notes")
ENV_VAR = "OURO_BUNDLE"
#: project pointer files, in the order they are looked for in each folder
POINTER_FILES = (".ouro", "ouro.toml")
#: a pointer file is read up to this many characters (``ouro.store.bounded``)
POINTER_LIMIT = 100_000
BUNDLE_SUFFIX = ".ouro"
_NOT_FOUND_HINT = (
    "run 'ouro init agent.ouro --link' at the project root, or point at a bundle with "
    f"a .ouro pointer file, '--bundle PATH' or ${ENV_VAR}"
)


@functools.lru_cache(maxsize=256)
def _lock_path(root: Path, name: str) -> Path:
    return root / "state" / "locks" / f"{name}.lock"


class Bundle:
    """A bundle folder: its canonical paths, metadata and discovery.

    Immutable and compared by ``root``. (A plain class: importing
    ``dataclasses`` costs a one-shot command more than its work.)
    """

    __slots__ = ("root",)
    root: Path

    def __init__(self, root: Path) -> None:
        object.__setattr__(self, "root", root)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Bundle is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Bundle is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash((self.root,))

    def __repr__(self) -> str:
        return f"Bundle(root={self.root!r})"

    def __reduce__(self) -> tuple[type[Bundle], tuple[Path]]:
        return (self.__class__, (self.root,))

    # --- canonical paths -------------------------------------------------
    @property
    def meta_path(self) -> Path:
        return self.root / "bundle.json"

    @property
    def arc(self) -> Path:
        return self.root / "arc"

    @property
    def desk(self) -> Path:
        return self.root / "desk"

    @property
    def record(self) -> Path:
        return self.root / "desk" / "_record"

    @property
    def habits(self) -> Path:
        return self.root / "habits"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def index_dir(self) -> Path:
        return self.root / "state" / "index"

    def lock_path(self, name: str) -> Path:
        """Where a named domain lock lives (``state/locks/<name>.lock``)."""
        return _lock_path(self.root, name)

    def path(self, locator: str | Locator) -> Path:
        """Resolve a locator to a path inside this bundle (refusing escapes)."""
        from ouro.store.locator import Locator

        loc = locator if isinstance(locator, Locator) else Locator.parse(locator)
        return loc.resolve(self.root)

    def locator(self, path: Path, fragment: str | None = None) -> str:
        from ouro.store.locator import Locator

        return str(Locator.for_path(self.root, path, fragment))

    # --- metadata --------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        """``bundle.json`` as a JSON object (read bounded; its fields are checked by
        ``check_meta``, which ``open`` runs)."""
        path = self.meta_path
        if not os.path.exists(path):  # a dangling symlink too, as before
            raise BundleNotFound(f"{self.root} has no bundle.json", hint=_NOT_FOUND_HINT)
        raw = read_bytes(path, limit=meta_shape.META_LIMIT, what=str(path), error=CorruptFile)
        try:
            data = loads(raw)
        except JSONDecodeError as exc:
            raise CorruptFile(
                f"{path}: not valid JSON ({exc})",
                hint=_meta_hint(self.root),
            ) from None
        if not isinstance(data, dict):
            raise CorruptFile(f"{path}: must be a JSON object", hint=_meta_hint(self.root))
        return data

    def check_meta(self) -> dict[str, Any]:
        """``bundle.json``, refused unless its fields are valid (``ouro.models.meta``):
        a layout made by a newer ouro is ``NewerLayout``, anything else ``CorruptFile``
        naming the file and the field."""
        data = self.read_meta()
        _refuse_newer(self.meta_path, data)
        found = meta_shape.problem(data)
        if found is not None:
            field, reason = found
            raise CorruptFile(
                f"{self.meta_path}: field {field!r} {reason}", hint=_meta_hint(self.root)
            )
        return data

    def legacy_roots(self) -> list[str]:
        return [name for name in LEGACY_ROOTS if (self.root / name).exists()]

    def check_layout(self) -> None:
        """Refuse the legacy layout; every command but ``ouro migrate`` calls this."""
        legacy = self.legacy_roots()
        if legacy:
            names = ", ".join(f"{n}/" for n in legacy)
            raise LegacyLayout(
                f"bundle {self.root} uses the old layout (top-level {names})",
                hint="run 'ouro migrate --dry-run' to see the plan, then 'ouro migrate' "
                "to move it into desk/_record/",
            )

    # --- opening ---------------------------------------------------------
    @classmethod
    def open(cls, path: Path | str, *, allow_legacy: bool = False) -> Bundle:
        root = Path(path).expanduser().absolute()
        if not root.is_dir():
            raise BundleNotFound(f"no bundle at {root}: not a folder", hint=_NOT_FOUND_HINT)
        bundle = cls(root)
        if not allow_legacy:
            bundle.check_layout()
            bundle.check_meta()
        elif os.path.isfile(bundle.meta_path):
            # ``ouro migrate`` reads old and damaged files its own way, but a
            # layout made by a newer ouro is never rewritten down to this one.
            try:
                data = bundle.read_meta()
            except CorruptFile:
                data = None
            _refuse_newer(bundle.meta_path, data)
        return bundle

    @classmethod
    def locate(
        cls,
        explicit: Path | str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        allow_legacy: bool = False,
    ) -> Bundle:
        return cls.discover(explicit, env=env, cwd=cwd, allow_legacy=allow_legacy).bundle

    @classmethod
    def discover(
        cls,
        explicit: Path | str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        allow_legacy: bool = False,
    ) -> Found:
        """The bundle and how it was found (see the module docstring for the order).

        A relative ``explicit`` or ``$OURO_BUNDLE`` path is taken from ``cwd``.
        """
        env = os.environ if env is None else env
        here = (cwd or Path.cwd()).absolute()
        if explicit:
            return Found(cls.open(_joined(here, explicit), allow_legacy=allow_legacy), "--bundle")
        if env.get(ENV_VAR):
            chosen = _joined(here, env[ENV_VAR])
            return Found(cls.open(chosen, allow_legacy=allow_legacy), f"${ENV_VAR}")
        pointer = find_pointer(here)
        if pointer is not None:
            target = read_pointer(pointer)
            try:
                bundle = cls.open(target, allow_legacy=allow_legacy)
            except BundleNotFound as exc:
                raise BundleNotFound(
                    f"the pointer {pointer} names {target}, which is not an ouro bundle "
                    f"({exc.message})",
                    hint=f"fix or remove {pointer}, or create the bundle with 'ouro init {target}'",
                ) from None
            return Found(bundle, f"pointer {pointer}")
        for folder in (here, *here.parents):
            if (folder / "bundle.json").is_file():
                return Found(cls.open(folder, allow_legacy=allow_legacy), "bundle.json above")
        children = bundle_children(here)
        if len(children) == 1:
            return Found(cls.open(children[0], allow_legacy=allow_legacy), "the *.ouro folder here")
        if len(children) > 1:
            names = ", ".join(c.name for c in children)
            raise BundleNotFound(
                f"{here} holds several bundles ({names}); ouro will not guess",
                hint=f"pick one: 'ouro init {children[0].name} --link' writes a .ouro pointer "
                "here, or pass '--bundle PATH'",
            )
        raise BundleNotFound(
            f"no ouro bundle found from {here}",
            hint=_NOT_FOUND_HINT,
        )

    @classmethod
    def init(cls, path: Path | str, *, agent: str | None = None) -> Bundle:
        # Resolve first ('zz/../x' with no zz, symlinks), then check: checking the
        # spelt path and writing the resolved one re-initialised existing bundles.
        root = Path(os.path.realpath(Path(path).expanduser()))
        if (root / "bundle.json").exists():
            raise BundleExists(
                f"{root} is already an ouro bundle",
                hint="use it as it is, or choose another PATH for 'ouro init' "
                "('ouro init PATH --repair' mends a damaged bundle.json)",
            )
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise BundleExists(
                f"{root} exists and is not an empty folder; ouro init will not overwrite it",
                hint="choose a new or empty folder",
            )
        # The name is checked by open's own rule before anything is written: a
        # bundle init made must open.
        if agent is not None:
            agent_name = meta_shape.check_agent(agent)
        else:
            agent_name = meta_shape.check_agent(
                default_agent_name(root),
                hint=f"the folder name {root.name!r} is not an agent name: pass --agent NAME",
            )
        from ouro.models.clock import utc_now_iso
        from ouro.resources import bundle_template
        from ouro.store.atomic import atomic_write_bytes, atomic_write_json
        from ouro.store.guard import make_dirs, remove_dirs

        created = make_dirs(root)
        try:
            for source, rel in bundle_template():
                atomic_write_bytes(root / rel, source.read_bytes(), root=root)
            atomic_write_json(  # last: a bundle.json means the bundle is complete
                root / "bundle.json",
                {
                    "schemaVersion": meta_shape.SCHEMA_VERSION,
                    "layoutVersion": LAYOUT_VERSION,
                    "agent": agent_name,
                    "createdAt": utc_now_iso(),
                },
                root=root,
            )
        except BaseException:
            # A failed init (disk full, say) leaves no half bundle: what it
            # created goes again; a folder that was already there stays, empty.
            import shutil  # here only: every command imports this module

            for child in list(root.iterdir()) if root.is_dir() else []:
                shutil.rmtree(
                    child
                ) if child.is_dir() and not child.is_symlink() else child.unlink()
            remove_dirs(created)
            raise
        return cls(root)

    @classmethod
    def repair(cls, path: Path | str, *, agent: str | None = None) -> dict[str, Any]:
        """Set again the fields of ``PATH/bundle.json`` that are missing or invalid
        (``ouro.models.meta.repaired``), keeping every other one: the way back for a
        bundle that no command opens because of its bundle.json. The old bytes go
        to ``state/backup/bundle.json.<time>`` first; a valid bundle.json is left
        as it is. A layout made by a newer ouro, the legacy layout (``ouro
        migrate``) and a bundle.json that is not a regular file are refused."""
        from ouro.models.clock import utc_now_iso
        from ouro.store.atomic import atomic_write_bytes, atomic_write_json

        root = Path(os.path.realpath(Path(path).expanduser()))
        bundle = cls(root)
        if not os.path.lexists(bundle.meta_path):
            raise BundleNotFound(
                f"{root} has no bundle.json: nothing to repair",
                hint=f"create a bundle with 'ouro init {path}'",
            )
        if os.path.islink(bundle.meta_path):
            raise CorruptFile(
                f"{bundle.meta_path} is a symlink; ouro repairs only a regular bundle.json",
                hint="replace the link with the file it names, then repair it",
            )
        bundle.check_layout()
        what = str(bundle.meta_path)
        raw = read_bytes(
            bundle.meta_path, limit=meta_shape.META_LIMIT, what=what, error=CorruptFile
        )
        try:
            data = loads(raw)
        except JSONDecodeError:
            data = None  # nothing in it to keep
        _refuse_newer(bundle.meta_path, data)
        doc, changed = meta_shape.repaired(
            data, agent=agent, default_agent=default_agent_name(root)
        )
        backup = None
        if changed:
            stamp = utc_now_iso().replace(":", "").replace("-", "")
            backup = f"state/backup/bundle.json.{stamp}"
            atomic_write_bytes(root / backup, raw, root=root)
            atomic_write_json(bundle.meta_path, doc, root=root)
        return {
            "bundle": str(root),
            "repaired": bool(changed),
            "changed": changed,
            "backup": backup,
            "agent": doc["agent"],
            "layoutVersion": doc["layoutVersion"],
        }


def _meta_hint(root: Path) -> str:
    """What to do about a damaged or invalid bundle.json of the bundle at ``root``."""
    return (
        f"'ouro init {root} --repair [--agent NAME]' sets its missing or invalid fields "
        "again (keeping the others, and the old file under state/backup/); or restore "
        "bundle.json from git or a backup; ouro left it untouched"
    )


def _refuse_newer(path: Path, data: Any) -> None:
    newer = meta_shape.newer_layout(data)
    if newer is not None:
        field, version = newer
        what, known = (
            ("layout", LAYOUT_VERSION)
            if field == "layoutVersion"
            else ("schemaVersion", meta_shape.SCHEMA_VERSION)
        )
        raise NewerLayout(
            f"{path}: made by a newer ouro ({what} {version}): upgrade ouro",
            hint=f"this ouro reads {what}s up to {known}; upgrade it "
            "(pip install -U ouro-bundle); ouro left the bundle untouched",
        )


class Found(NamedTuple):
    """A located bundle and, for people, how discovery reached it."""

    bundle: Bundle
    how: str  # "--bundle" | "$OURO_BUNDLE" | "pointer <file>" | "bundle.json above" | …


def _joined(base: Path, path: Path | str) -> Path:
    """``path`` taken from ``base`` when relative, with ``..`` folded."""
    return Path(os.path.normpath(base / Path(path).expanduser()))


def find_pointer(start: Path) -> Path | None:
    """The nearest pointer file from ``start`` upwards, or None."""
    import stat

    # plain strings and stat: every diary write looks a setting up from the cwd
    folder = os.fspath(start)
    while True:
        for name in POINTER_FILES:
            candidate = os.path.join(folder, name)
            try:
                if stat.S_ISREG(os.stat(candidate).st_mode):
                    return Path(candidate)
            except (FileNotFoundError, NotADirectoryError):
                pass
            except OSError as exc:  # as Path.is_file: a loop is "no", the rest raise
                if exc.errno not in (errno.ELOOP, errno.EBADF):
                    raise
        parent = os.path.dirname(folder) or "."  # a relative start ends at "." (as parents)
        if parent == folder:
            return None
        folder = parent


def read_pointer(pointer: Path) -> Path:
    """The bundle path a pointer file names, resolved from the pointer's folder."""
    try:
        text = read_text(pointer, limit=POINTER_LIMIT, what=f"the bundle pointer {pointer}")
    except OuroError as exc:
        raise BundleNotFound(exc.message, hint=f"fix or remove {pointer}") from None
    if pointer.name == "ouro.toml":
        value = _toml_bundle(pointer, text)
    else:
        lines = [ln.strip() for ln in text.splitlines()]
        names = [ln for ln in lines if ln and not ln.startswith("#")]
        if len(names) != 1:
            raise BundleNotFound(
                f"the bundle pointer {pointer} must hold exactly one line: the bundle's path "
                "relative to the pointer's folder",
                hint=f"write it with 'ouro init PATH --link' from {pointer.parent}",
            )
        value = names[0]
    return Path(os.path.normpath(pointer.parent / Path(value).expanduser()))


def _toml_bundle(pointer: Path, text: str) -> str:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BundleNotFound(
            f"{pointer}: not valid TOML ({exc})", hint=f"fix {pointer}; ouro left it untouched"
        ) from None
    value = data.get("bundle")
    if not isinstance(value, str) or not value.strip():
        raise BundleNotFound(
            f'{pointer}: needs a string key bundle = "PATH" (the bundle\'s path relative '
            "to this file)",
            hint=f"add it to {pointer}",
        )
    return value.strip()


def bundle_children(folder: Path) -> list[Path]:
    """``*.ouro`` folders directly inside ``folder`` that hold a ``bundle.json``."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [
        p
        for p in entries
        if p.name.endswith(BUNDLE_SUFFIX)
        and len(p.name) > len(BUNDLE_SUFFIX)
        and (p / "bundle.json").is_file()
    ]


def pointer_text(folder: Path, bundle_root: Path) -> str:
    return os.path.relpath(bundle_root.absolute(), folder.absolute()).replace(os.sep, "/") + "\n"


def write_pointer(folder: Path, bundle_root: Path) -> tuple[Path, bool]:
    """Write ``<folder>/.ouro`` naming ``bundle_root``; (path, whether it was written)."""
    pointer = folder.absolute() / POINTER_FILES[0]
    if pointer.exists():
        if pointer.is_file() and read_pointer(pointer).resolve() == bundle_root.resolve():
            return pointer, False
        raise BundleExists(
            f"{pointer} already exists and does not point at {bundle_root}",
            hint=f"edit or remove {pointer} yourself; ouro will not replace it",
        )
    from ouro.store.atomic import atomic_write_text

    atomic_write_text(pointer, pointer_text(folder, bundle_root))
    return pointer, True


def default_agent_name(root: Path) -> str:
    """The agent a bundle at ``root`` is for when none is named: its folder's name
    without ``.ouro`` (``ouro init``, and ``ouro migrate`` for a bundle.json without one)."""
    name = root.name
    return name[: -len(".ouro")] if name.endswith(".ouro") and len(name) > 5 else name or "agent"
