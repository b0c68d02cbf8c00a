"""``Bundle.discover`` is the one bundle discovery: every case a front end meets.

Each way in (``--bundle``, ``$OURO_BUNDLE``, a pointer file upwards, ``bundle.json``
upwards, the one ``*.ouro`` child) finds the bundle or refuses it with the
error that names the problem; none of them falls through to another bundle.
It is cheap to import: a front end pays for it on every command.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle, write_pointer
from ouro.errors import BundleNotFound, CorruptFile, LegacyLayout, NewerLayout, OuroError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The README's layout: ``ouro init agent.ouro --link`` at a project root."""
    root = tmp_path / "proj"
    (root / "src" / "deep").mkdir(parents=True)
    write_pointer(root, Bundle.init(root / "agent.ouro").root)
    return root


def _ways(project: Path) -> dict[str, Bundle | Exception]:
    """What each way in finds for the project's bundle (the error when it refuses)."""
    root = project / "agent.ouro"
    calls = {
        "--bundle": lambda: Bundle.locate(str(root), env={}),
        "--bundle relative": lambda: Bundle.locate("agent.ouro", env={}, cwd=project),
        "$OURO_BUNDLE": lambda: Bundle.locate(None, env={"OURO_BUNDLE": str(root)}),
        "$OURO_BUNDLE relative": lambda: Bundle.locate(
            None, env={"OURO_BUNDLE": "../agent.ouro"}, cwd=project / "src"
        ),
        "pointer": lambda: Bundle.locate(None, env={}, cwd=project / "src" / "deep"),
        "bundle.json above": lambda: Bundle.locate(None, env={}, cwd=root / "desk" / "_record"),
    }
    out: dict[str, Bundle | Exception] = {}
    for way, call in calls.items():
        try:
            out[way] = call()
        except OuroError as exc:
            out[way] = exc
    return out


def test_every_way_in_finds_the_bundle(project: Path) -> None:
    found = _ways(project)
    assert found == dict.fromkeys(found, Bundle(project / "agent.ouro"))
    assert len(found) == 6


def test_the_child_rule_finds_a_bundle_without_a_pointer(project: Path) -> None:
    (project / ".ouro").unlink()
    found = Bundle.discover(None, env={}, cwd=project)
    assert found == (Bundle(project / "agent.ouro"), "the *.ouro folder here")


def test_home_is_expanded_in_bundle_and_env(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(project))
    want = Bundle(project / "agent.ouro")
    assert Bundle.locate("~/agent.ouro", env={}) == want
    assert Bundle.locate(None, env={"OURO_BUNDLE": "~/agent.ouro"}, cwd=Path("/")) == want


def test_an_empty_env_value_is_no_choice(project: Path) -> None:
    found = Bundle.discover(None, env={"OURO_BUNDLE": ""}, cwd=project / "src")
    assert found.how.startswith("pointer ")
    assert Bundle.discover("", env={}, cwd=project).how.startswith("pointer ")


def test_the_explicit_choices_come_before_the_pointer(project: Path, tmp_path: Path) -> None:
    other = Bundle.init(tmp_path / "other.ouro")
    assert Bundle.discover(None, env={"OURO_BUNDLE": str(other.root)}, cwd=project).bundle == other
    assert Bundle.discover(str(other.root), env={"OURO_BUNDLE": "x"}, cwd=project).how == (
        "--bundle"
    )


@pytest.mark.parametrize(
    ("name", "content", "error", "said"),
    [
        ("bundle.json", b"not json", CorruptFile, "not valid JSON"),
        ("bundle.json", b"[1, 2]", CorruptFile, "must be a JSON object"),
        ("bundle.json", b'{"layoutVersion": NaN}', CorruptFile, "not valid JSON"),
        ("bundle.json", b"\xff\xfe{}", CorruptFile, "not valid JSON"),
        ("bundle.json", b'{"layoutVersion": "one"}', CorruptFile, "field"),
        ("bundle.json", b'{"schemaVersion": 1, "layoutVersion": 99}', NewerLayout, "upgrade"),
        ("bundle.json", b" " * 2_000_000 + b"{}", CorruptFile, "bundle.json"),
        ("journal", None, LegacyLayout, "ouro migrate"),
    ],
)
def test_every_way_in_refuses_a_bundle_it_cannot_open(
    project: Path, name: str, content: bytes | None, error: type[OuroError], said: str
) -> None:
    target = project / "agent.ouro" / name
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    found = _ways(project)
    for way, result in found.items():
        assert isinstance(result, error), (way, result)
        assert said in result.message + (result.hint or ""), (way, result.message)


def test_a_path_that_is_not_a_bundle_is_refused(project: Path) -> None:
    with pytest.raises(BundleNotFound, match="not a folder"):
        Bundle.locate(str(project / "agent.ouro" / "bundle.json"), env={})
    (project / "agent.ouro" / "bundle.json").unlink()
    with pytest.raises(BundleNotFound, match="not an ouro bundle"):  # named by the pointer
        Bundle.locate(None, env={}, cwd=project)
    with pytest.raises(BundleNotFound, match=r"no bundle\.json"):
        Bundle.locate(str(project / "agent.ouro"), env={})


def test_locating_is_cheap_to_import(project: Path) -> None:
    """Discovery through the pointer layout imports no writer, parser or schema."""
    code = (
        "import sys\n"
        "from ouro.bundle import Bundle\n"
        "found = Bundle.discover()\n"
        "print(found.bundle.root)\n"
        "heavy = {'orjson', 'yaml', 'pydantic', 'click', 'datetime', 'tomllib',\n"
        "         'ouro.store.atomic', 'ouro.models.clock', 'ouro.resources'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project / "src",
        env={"PATH": "/usr/bin:/bin", "HOME": str(project)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.splitlines() == [str(project / "agent.ouro"), "[]"]
