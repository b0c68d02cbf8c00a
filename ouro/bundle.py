"""The bundle: locate it, create it, check its layout, name its paths.

Contract:
- ``bundle.json`` at the root marks a bundle (layout version, agent, created-at).
- ``ouro init`` resolves PATH (symlinks, ``..``) before it checks it, copies
  ``templates/bundle/`` (each file written atomically, confined to the new
  bundle) and writes ``bundle.json`` last; it never overwrites an existing
  bundle or a non-empty folder.
- Every command except ``ouro migrate`` refuses a bundle that still has a
  top-level ``journal/``, ``diary/`` or ``notes/`` (the legacy layout).
- Discovery: ``--bundle PATH``, else ``$OURO_BUNDLE``, else walk up from the
  current directory to the nearest ``bundle.json``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ouro.errors import BundleExists, BundleNotFound, CorruptFile, LegacyLayout
from ouro.models.clock import utc_now_iso
from ouro.resources import bundle_template
from ouro.store.atomic import atomic_write_bytes, atomic_write_json
from ouro.store.guard import make_dirs
from ouro.store.locator import Locator

LAYOUT_VERSION = 2
LEGACY_ROOTS = ("journal", "diary", "notes")
ENV_VAR = "OURO_BUNDLE"
_NOT_FOUND_HINT = (
    "create one with 'ouro init PATH', or point at one with '--bundle PATH' "
    f"or the {ENV_VAR} environment variable"
)


@dataclass(frozen=True)
class Bundle:
    root: Path

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
        return self.root / "state" / "locks" / f"{name}.lock"

    def path(self, locator: str | Locator) -> Path:
        """Resolve a locator to a path inside this bundle (refusing escapes)."""
        loc = locator if isinstance(locator, Locator) else Locator.parse(locator)
        return loc.resolve(self.root)

    def locator(self, path: Path, fragment: str | None = None) -> str:
        return str(Locator.for_path(self.root, path, fragment))

    # --- metadata --------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        try:
            data = orjson.loads(self.meta_path.read_bytes())
        except FileNotFoundError:
            raise BundleNotFound(f"{self.root} has no bundle.json", hint=_NOT_FOUND_HINT) from None
        except orjson.JSONDecodeError as exc:
            raise CorruptFile(
                f"{self.meta_path}: not valid JSON ({exc})",
                hint="restore bundle.json from git or a backup; ouro left it untouched",
            ) from None
        if not isinstance(data, dict):
            raise CorruptFile(
                f"{self.meta_path}: must be a JSON object", hint="restore bundle.json"
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
            bundle.read_meta()
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
        env = os.environ if env is None else env
        if explicit:
            return cls.open(explicit, allow_legacy=allow_legacy)
        if env.get(ENV_VAR):
            return cls.open(env[ENV_VAR], allow_legacy=allow_legacy)
        here = (cwd or Path.cwd()).absolute()
        for folder in (here, *here.parents):
            if (folder / "bundle.json").is_file():
                return cls.open(folder, allow_legacy=allow_legacy)
        raise BundleNotFound(
            f"no ouro bundle found (looked for bundle.json from {here} upwards)",
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
                hint="use it as it is, or choose another PATH for 'ouro init'",
            )
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise BundleExists(
                f"{root} exists and is not an empty folder; ouro init will not overwrite it",
                hint="choose a new or empty folder",
            )
        agent_name = agent or _default_agent_name(root)
        make_dirs(root)
        for source, rel in bundle_template():
            atomic_write_bytes(root / rel, source.read_bytes(), root=root)
        atomic_write_json(  # last: a bundle.json means the bundle is complete
            root / "bundle.json",
            {
                "schemaVersion": 1,
                "layoutVersion": LAYOUT_VERSION,
                "agent": agent_name,
                "createdAt": utc_now_iso(),
            },
            root=root,
        )
        return cls(root)


def _default_agent_name(root: Path) -> str:
    name = root.name
    return name[: -len(".ouro")] if name.endswith(".ouro") and len(name) > 5 else name or "agent"
