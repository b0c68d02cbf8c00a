"""Settings with a precedence you can see: ``ouro config get|set|list``.

A setting's value comes from the highest of these sources that has it
(``SOURCES``, lowest first):

- ``default``: the built-in default (``SETTINGS``);
- ``global``: ``$XDG_CONFIG_HOME/ouro/config.toml`` (``~/.config/ouro/config.toml``),
  flat TOML ``key = "value"``;
- ``bundle``: ``bundle.json`` (``agent`` is its top-level ``agent``; the others
  live under ``"settings"``);
- ``project``: ``ouro.toml`` in the project root, the folder of the nearest
  bundle pointer walking up from the current folder (``.ouro`` or
  ``ouro.toml``, ``ouro.bundle.find_pointer``); its ``bundle`` key is the
  pointer, not a setting. ``set --project`` creates it next to a ``.ouro``
  pointer with the same ``bundle`` path, so it stays a valid pointer;
- ``env``: ``OURO_<KEY>`` (``OURO_COLOR=never``);
- ``command``: ``--config KEY=VALUE`` on the command line (anywhere on it).

Only the names in ``SETTINGS`` exist, plus the readiness sources a bundle
declares (``readiness.<source>.command|timeout|env|files``, bundle.json only;
run by ``ouro sentinel refresh``, ``ouro.sentinel.readiness``); any other
name, or a value outside a setting's choices, is ``InvalidInput`` naming it. Writes (``set_value``) are
atomic (temp + fsync + rename) under a lock. A file that cannot be parsed is
never silently ignored: ``layers`` raises ``CorruptFile`` naming it (``ouro
config get|list`` exit 3); ``set_value`` into it first copies it aside to
``<file>.bad-<UTC stamp>``, says so, then writes a fresh file;
``lookup`` (used while printing) warns once on stderr and skips that file.
Reading changes no file. Standard library only; TOML is parsed lazily.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile, InvalidInput, NotFound

SOURCES = ("default", "global", "bundle", "project", "env", "command")
#: the project settings file, in the folder of the project's bundle pointer
PROJECT_FILE = "ouro.toml"
#: a settings file (global or project) is read up to this many bytes
SETTINGS_LIMIT = 1_000_000
#: files written by ``set``: the scopes a user can choose
WRITABLE = ("global", "bundle", "project")


class Setting:
    """One known setting. (A plain class: ``dataclasses`` costs a cold CLI ~5 ms.)"""

    __slots__ = ("choices", "default", "description", "name")

    def __init__(
        self, name: str, description: str, default: str | None, choices: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.description = description
        self.default = default
        self.choices = choices

    @property
    def env(self) -> str:
        return "OURO_" + self.name.upper().replace(".", "_").replace("-", "_")


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting(
            "agent",
            "The agent's name: the default --agent for task leases and iterations.",
            None,
        ),
        Setting(
            "color",
            "Colour statuses in human output: auto (on a terminal, unless NO_COLOR is set), "
            "always, never.",
            "auto",
            ("auto", "always", "never"),
        ),
        Setting(
            "progress",
            "Progress lines on stderr for long work: auto (on a terminal, never with --json), "
            "always, never.",
            "auto",
            ("auto", "always", "never"),
        ),
        Setting(
            "diary.near",
            "How diary_write finds near-duplicates among active facts sharing an entity: "
            "words (token overlap > 0.6) or meaning (also by embeddings, cosine >= 0.75; "
            "needs ouro-bundle[semantic]).",
            "words",
            ("words", "meaning"),
        ),
        Setting(
            "habits.agent",
            "The agent that runs a habit with no run: and no agent: of its own, headless in "
            "the habit's private session.",
            "claude",
            ("claude", "codex", "pi", "gemini", "opencode"),
        ),
        *(
            Setting(
                f"habits.command.{host}",
                f"The {host} executable habit sessions launch (default: {host} on PATH).",
                None,
            )
            for host in ("claude", "codex", "pi", "gemini", "opencode")
        ),
        Setting(
            "dates",
            "How human output shows times: relative (3h ago) or absolute (ISO 8601).",
            "relative",
            ("relative", "absolute"),
        ),
    )
}

#: A readiness source's keys (``readiness.<source>.<field>``): field -> description.
READINESS_FIELDS: dict[str, str] = {
    "command": "A readiness check for {source}: a shell command, exit 0 = ready; run by "
    "'ouro sentinel refresh' (outside its lock, bounded by the timeout), its result kept.",
    "timeout": "Seconds before the readiness check of {source} is stopped (default 30, at most "
    "600).",
    "env": "Environment variables {source} needs, comma-separated (names only; one that is "
    "missing or empty is a missing credential; they are passed to its check).",
    "files": "Credential files {source} needs, comma-separated (~ or bundle-relative; only "
    "their existence is checked, never their content).",
}
READINESS_TIMEOUT_MAX = 600.0
_READINESS = re.compile(r"readiness\.([a-z0-9][a-z0-9_-]{0,39})\.(command|timeout|env|files)")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

#: ``--config KEY=VALUE`` pairs from the command line (set by the CLI root)
COMMAND_LINE: dict[str, str] = {}


def readiness_key(name: str) -> tuple[str, str] | None:
    """(source, field) of a readiness key, or None when ``name`` is not one."""
    match = _READINESS.fullmatch(name)
    return (match[1], match[2]) if match else None


def setting(name: str) -> Setting:
    known = SETTINGS.get(name)
    if known is not None:
        return known
    readiness = readiness_key(name)
    if readiness is not None:
        source, field = readiness
        return Setting(name, READINESS_FIELDS[field].format(source=source), None)
    raise InvalidInput(
        f"key: no setting named {name!r}",
        hint="settings are: "
        + ", ".join(SETTINGS)
        + ", readiness.<source>.command|timeout|env|files ('ouro config list')",
    )


def _check_readiness(name: str, field: str, value: str) -> None:
    if field == "timeout":
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= READINESS_TIMEOUT_MAX:
            raise InvalidInput(
                f"{name}: {value!r} is not a number of seconds above 0 and at most "
                f"{READINESS_TIMEOUT_MAX:g}",
                hint=f"for example: ouro config set {name} 30",
            )
    elif field == "env":
        bad = [v for v in split_list(value) if not _ENV_NAME.fullmatch(v)]
        if bad or not split_list(value):
            raise InvalidInput(
                f"{name}: {', '.join(bad) or repr(value)} is not an environment variable name",
                hint=f"names only, comma-separated: ouro config set {name} ANTHROPIC_API_KEY",
            )
    elif field == "files" and ("\x00" in value or not split_list(value)):
        raise InvalidInput(f"{name}: {value!r} names no file", hint="comma-separated paths")
    elif field == "command" and len(value) > 2000:
        raise InvalidInput(f"{name}: longer than 2000 characters", hint="put it in a script")


def split_list(value: str) -> list[str]:
    """A comma-separated setting's items, stripped, empty ones dropped."""
    return [item.strip() for item in value.split(",") if item.strip()]


def readiness_sources(meta: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The readiness sources bundle.json declares: ``{source: {field: value}}``, sorted."""
    settings = meta.get("settings")
    out: dict[str, dict[str, str]] = {}
    if not isinstance(settings, dict):
        return out
    for key in sorted(settings):
        found = readiness_key(key) if isinstance(key, str) else None
        if found is not None:
            out.setdefault(found[0], {})[found[1]] = str(settings[key])
    return out


def check_value(name: str, value: str) -> str:
    known = setting(name)
    if known.choices and value not in known.choices:
        raise InvalidInput(
            f"{name}: {value!r} is not one of {', '.join(known.choices)}",
            hint=f"for example: ouro config set {name} {known.choices[0]}",
        )
    if name == "agent":  # the rule bundle.json's agent is opened by (ouro.models.meta)
        from ouro.models.meta import check_agent

        return check_agent(value, hint="for example: ouro config set agent ada")
    if not value.strip():
        raise InvalidInput(f"{name}: empty value", hint=f"for example: ouro config set {name} x")
    readiness = readiness_key(name)
    if readiness is not None:
        _check_readiness(name, readiness[1], value)
    return value


def parse_assignment(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from ``--config``, checked."""
    key, eq, value = text.partition("=")
    if not eq:
        raise InvalidInput(
            f"--config: {text!r} is not KEY=VALUE", hint="for example: --config color=never"
        )
    if readiness_key(key.strip()) is not None:
        raise InvalidInput(
            f"--config: {key.strip()} is a readiness source, declared in bundle.json only",
            hint=f"ouro config set {key.strip()} VALUE",
        )
    return key.strip(), check_value(key.strip(), value.strip())


# --- where the files are --------------------------------------------------------


def global_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ouro" / "config.toml"


def project_pointer(start: Path | None = None) -> Path | None:
    """The nearest bundle pointer file walking up from ``start`` (the cwd)."""
    from ouro.bundle import find_pointer

    return find_pointer((start or Path.cwd()).absolute())


def project_path(start: Path | None = None) -> Path | None:
    """The project settings file (it may not exist yet), or None outside a project."""
    pointer = project_pointer(start)
    return None if pointer is None else pointer.parent / PROJECT_FILE


# --- reading ------------------------------------------------------------------------


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value if isinstance(value, str) else str(value)
    return out


def read_toml(path: Path) -> dict[str, str] | None:
    """The flat settings in a TOML file; None if it does not exist."""
    if not os.path.exists(path):  # a dangling symlink too, as before
        return None
    from ouro.store.bounded import read_bytes

    # bounded while read, regular files only: a settings file is input from outside
    data = read_bytes(path, limit=SETTINGS_LIMIT, what=str(path), error=CorruptFile)
    import tomllib  # only when there is a file: a diary write looks up a setting

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CorruptFile(
            f"{path}: not valid TOML ({exc})",
            hint="fix it by hand, or 'ouro config set' copies it aside and writes a fresh one",
        ) from None
    return _flatten(table)


def _bundle_settings(meta: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(meta.get("agent"), str):
        out["agent"] = meta["agent"]
    settings = meta.get("settings")
    if isinstance(settings, dict):
        out.update({k: str(v) for k, v in settings.items() if k != "agent"})
    return out


def layers(bundle_root: Path | None, *, cwd: Path | None = None) -> dict[str, dict[str, str]]:
    """Every source's values, lowest precedence first. Raises ``CorruptFile``."""
    found: dict[str, dict[str, str]] = {
        "default": {n: s.default for n, s in SETTINGS.items() if s.default is not None}
    }
    found["global"] = read_toml(global_path()) or {}
    found["bundle"] = {}
    if bundle_root is not None:
        from ouro.bundle import Bundle

        found["bundle"] = _bundle_settings(Bundle(bundle_root).read_meta())
    project = project_path(cwd)
    values = read_toml(project) if project else None
    found["project"] = {k: v for k, v in (values or {}).items() if k != "bundle"}
    found["env"] = {n: os.environ[s.env] for n, s in SETTINGS.items() if s.env in os.environ}
    found["command"] = dict(COMMAND_LINE)
    return found


def origin_label(source: str, bundle_root: Path | None) -> str:
    if source == "global":
        return f"global ({global_path()})"
    if source == "bundle" and bundle_root is not None:
        return f"bundle ({bundle_root / 'bundle.json'})"
    if source == "project":
        return f"project ({project_path()})"
    if source == "env":
        return "env"
    return source


def resolve(bundle_root: Path | None) -> dict[str, tuple[str | None, str]]:
    """``{name: (value, source)}`` for every setting (unknown keys in files are ignored)."""
    found = layers(bundle_root)
    out: dict[str, tuple[str | None, str]] = {}
    declared = sorted(k for k in found["bundle"] if readiness_key(k) is not None)
    for name in [*SETTINGS, *declared]:
        value: str | None = None
        source = "default"
        for layer in SOURCES:
            if name in found[layer]:
                value, source = found[layer][name], layer
        out[name] = (value, source)
    return out


def rows(bundle_root: Path | None, names: list[str] | None = None) -> list[dict[str, Any]]:
    """The named settings (default: every one that resolves, readiness keys
    included) as ``config get|list`` report them: value, source, the source's
    label (with its file) and the setting's description."""
    resolved = resolve(bundle_root)
    if names is None:
        names = list(resolved)
    return [
        {
            "key": name,
            "value": resolved[name][0],
            "source": resolved[name][1],
            "origin": origin_label(resolved[name][1], bundle_root),
            "description": setting(name).description,
        }
        for name in names
    ]


_warned: set[str] = set()
#: path -> (trusted stamp, what ``lookup`` read from it): a long-lived process
#: (``ouro mcp``) reads a settings file again only when its stamp moved
_READ: dict[str, tuple[tuple[int, int, int, int], dict[str, str]]] = {}


def _read_cached(path: Path, read: Callable[[Path], dict[str, str] | None]) -> dict[str, str]:
    """``read(path) or {}``, kept per process while the file's stamp
    (``ouro.store.stamp``) stays put and is trusted; a missing file is looked
    for again every time, and a file that cannot be read is never kept."""
    from ouro.store import stamp

    key = os.fspath(path)
    try:
        seen = stamp.trusted(os.stat(path))
    except (OSError, ValueError):
        seen = None
    hit = _READ.get(key)
    if seen is not None and hit is not None and hit[0] == seen:
        return hit[1]
    values = read(path) or {}  # stamped before reading: a change meanwhile moves it
    if seen is None:
        _READ.pop(key, None)
    else:
        _READ[key] = (seen, values)
    return values


def lookup(name: str, bundle_root: Path | None = None) -> str | None:
    """One setting's effective value, for printing decisions: command line and
    environment first (cheap), then the files; an unreadable file is warned
    about on stderr once and skipped, never silently."""
    if name in COMMAND_LINE:
        return COMMAND_LINE[name]
    known = setting(name)
    if known.env in os.environ:
        return os.environ[known.env]
    try:
        project = project_path()
        values = _read_cached(project, read_toml) if project else {}
        if name in values:
            return values[name]
        if bundle_root is not None:
            from ouro.bundle import Bundle

            folder = Bundle(bundle_root)
            bundled = _read_cached(
                folder.meta_path, lambda _p: _bundle_settings(folder.read_meta())
            )
            if name in bundled:
                return bundled[name]
        values = _read_cached(global_path(), read_toml)
        if name in values:
            return values[name]
    except CorruptFile as exc:
        if exc.message not in _warned:
            _warned.add(exc.message)
            sys.stderr.write(f"warning: {exc.message} (ignored for {name})\n")
    return known.default


# --- writing --------------------------------------------------------------------------


def _toml_line(key: str, value: str) -> str:
    import json

    bare = all(part and all(c.isalnum() or c in "_-" for c in part) for part in key.split("."))
    return f"{key if bare else json.dumps(key)} = {json.dumps(value, ensure_ascii=False)}\n"


def _backup(path: Path) -> Path:
    import shutil
    import time

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.bad-{stamp}")
    shutil.copy2(path, target)
    return target


def _write_toml(path: Path, name: str, value: str | None, lock: Path) -> str | None:
    from ouro.store.atomic import atomic_write_text
    from ouro.store.lock import FileLock

    with FileLock(lock, purpose="config set"):
        backup: str | None = None
        try:
            values = read_toml(path) or {}
        except CorruptFile:
            backup = str(_backup(path))
            values = {}
        if value is None:
            if name not in values:
                raise NotFound(
                    f"{name} is not set in {path}", hint="'ouro config list --show-origin'"
                )
            del values[name]
        else:
            values[name] = value
        atomic_write_text(path, "".join(_toml_line(k, v) for k, v in values.items()))
    return backup


def _project_lock(path: Path) -> Path:
    import hashlib

    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return global_path().parent / "locks" / f"project-{digest}.lock"


def set_value(name: str, value: str | None, scope: str, bundle_root: Path | None) -> dict[str, Any]:
    """Write (or with ``value=None`` remove) one setting in ``scope``'s file."""
    setting(name)
    if value is not None:
        value = check_value(name, value)
    if readiness_key(name) is not None and scope != "bundle":
        raise InvalidInput(
            f"{name}: readiness sources are declared in bundle.json, not the {scope} file",
            hint=f"ouro config set {name} VALUE (without --global / --project)",
        )
    backup: str | None = None
    if scope == "global":
        path = global_path()
        backup = _write_toml(path, name, value, path.with_name("config.toml.lock"))
    elif scope == "project":
        pointer = project_pointer()
        if pointer is None:
            raise NotFound(
                "no project here: no bundle pointer (.ouro or ouro.toml) in this folder or above",
                hint="run 'ouro init PATH --link' at the project root, or use --global",
            )
        path = pointer.parent / PROJECT_FILE
        if not path.exists():  # keep it a valid pointer: the bundle .ouro names
            from ouro.bundle import read_pointer

            relative = os.path.relpath(read_pointer(pointer), pointer.parent)
            _write_toml(path, "bundle", relative.replace(os.sep, "/"), _project_lock(path))
        backup = _write_toml(path, name, value, _project_lock(path))
    elif scope == "bundle":
        if bundle_root is None:
            raise InvalidInput("scope: bundle needs a bundle", hint="pass --bundle PATH")
        from ouro.bundle import Bundle
        from ouro.store.atomic import atomic_write_json
        from ouro.store.lock import FileLock

        bundle = Bundle(bundle_root)
        path = bundle.meta_path
        with FileLock(bundle.lock_path("bundle-json"), purpose="config set"):
            meta = bundle.read_meta()  # a corrupt bundle.json is reported, never replaced
            if name == "agent":
                if value is None:
                    raise InvalidInput("agent: bundle.json must name its agent", hint="set another")
                meta["agent"] = value
            else:
                settings = dict(meta.get("settings") or {})
                if value is None:
                    if name not in settings:
                        raise NotFound(f"{name} is not set in {path}", hint="'ouro config list'")
                    settings.pop(name)
                else:
                    settings[name] = value
                if settings:
                    meta["settings"] = settings
                else:
                    meta.pop("settings", None)
            atomic_write_json(path, meta)
    else:
        raise InvalidInput(f"scope: {scope!r} is not one of {', '.join(WRITABLE)}")
    return {"key": name, "value": value, "scope": scope, "file": str(path), "backup": backup}
