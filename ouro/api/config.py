"""``b.config``: settings as this bundle sees them (bundle.json, project, global, env).

Reads resolve every layer (``ouro.config.resolve``); writes go to bundle.json by
default, or to the global file / the project pointer file with ``scope``.
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.spec import P, verb

Key = Annotated[str, P("the setting's name (ouro config list names them)")]
Scope = Annotated[str, P("where to write it", choices=("bundle", "global", "project"))]


class Config(Namespace):
    def _rows(self, names: list[str]) -> list[dict[str, Any]]:
        from ouro import config

        return config.rows(self.folder.root, names)

    @verb
    def get(self, key: Key) -> dict[str, Any]:
        """One setting's effective value (``value`` None when it has none) and its source."""
        from ouro import config

        config.setting(key)  # an unknown name is refused, naming the known ones
        return self._rows([key])[0]

    @verb
    def list(self) -> dict[str, Any]:
        """Every setting with its effective value and its source."""
        from ouro import config

        return {"settings": config.rows(self.folder.root)}

    @verb
    def set(
        self,
        key: Key,
        value: Annotated[str, P("the value")],
        *,
        scope: Scope = "bundle",
    ) -> dict[str, Any]:
        """Write a setting to bundle.json (default), the global file or the project
        pointer file."""
        from ouro import config

        root = self.folder.root if scope == "bundle" else None
        return config.set_value(key, value, scope, root)

    @verb
    def unset(self, key: Key, *, scope: Scope = "bundle") -> dict[str, Any]:
        """Remove a setting from bundle.json (default), the global file or the project file."""
        from ouro import config

        root = self.folder.root if scope == "bundle" else None
        return config.set_value(key, None, scope, root)
