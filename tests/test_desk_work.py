"""Tracks, tasks, iterations, friction, tips and featured: real files, exact shapes."""

from __future__ import annotations

import json

import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import featured, names, tasks
from ouro.errors import CorruptFile, InvalidInput, NotFound
from ouro.store import frontmatter
from tests.conftest import ouro_json, run_ouro, snapshot


def call(bundle: Bundle, tool: str, /, **args: object) -> dict:
    return tools.call(tool, bundle, args)


def test_slugs_and_track_names() -> None:
    assert names.slugify("Ship the Parser!  v2") == "ship-the-parser-v2"
    assert names.slugify("Café déjà") == "cafe-deja"
    assert names.slugify("!!!") == ""
    taken = {"a", "a-2"}
    assert names.unique_slug("a", taken.__contains__) == "a-3"
    for bad in ("../x", "a/b", "_record", "_x", "", "  ", "!!!"):
        with pytest.raises(InvalidInput):
            names.validate_track_name(bad)
    assert names.parse_duration("30m", field="lease") == 1800
    assert names.parse_duration("2", field="lease") == 2
    for bad in ("0s", "8d", "soon", "-1m"):
        with pytest.raises(InvalidInput):
            names.parse_duration(bad, field="lease")


def test_track_add_is_idempotent_and_refuses_reserved(bundle: Bundle) -> None:
    first = call(bundle, "desk_track_add", name="Release 1")
    assert first == {
        "track": "release-1",
        "title": "Release 1",
        "created": True,
        "locator": "desk/release-1/track.md",
    }
    before = snapshot(bundle.root)
    again = call(bundle, "desk_track_add", name="release-1")
    assert again["created"] is False
    assert snapshot(bundle.root) == before
    meta, _ = frontmatter.parse((bundle.desk / "release-1" / "track.md").read_text())
    assert list(meta) == ["name", "title", "created"]
    with pytest.raises(InvalidInput, match="reserved"):
        call(bundle, "desk_track_add", name="_record")
    assert not (bundle.desk / "record").exists()


def test_task_add_writes_the_documented_front_matter(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    out = call(
        bundle,
        "desk_task_add",
        track="web",
        title="Fix login",
        body="Details.",
        priority=1,
        acceptance="users log in",
        check="pytest -k login",
    )
    task = out["task"]
    path = bundle.root / task["locator"]
    assert task["locator"] == "desk/web/fix-login/task.md"
    meta, body = frontmatter.parse(path.read_text())
    assert list(meta) == list(tasks.TASK_KEYS)
    assert meta["id"].startswith("t-") and meta["status"] == "open" and meta["priority"] == 1
    assert meta["heldBy"] is None and meta["leaseUntil"] is None and meta["history"] == []
    assert meta["acceptance"] == "users log in" and meta["check"] == "pytest -k login"
    assert body == "Details.\n"
    # the same title again gets a suffixed folder, never the same one
    second = call(bundle, "desk_task_add", track="web", title="Fix login!")["task"]
    assert second["slug"] == "fix-login-2" and second["id"] != task["id"]


def test_task_add_bad_input_writes_nothing(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    before = snapshot(bundle.root)
    for args in (
        {"track": "web", "title": ""},
        {"track": "web", "title": "a\nb"},
        {"track": "web", "title": "ok", "priority": 12},
    ):
        with pytest.raises(InvalidInput):
            call(bundle, "desk_task_add", **args)
    with pytest.raises(NotFound, match="desk track add nope"):
        call(bundle, "desk_task_add", track="nope", title="x")
    assert snapshot(bundle.root) == before


def test_update_list_show_and_lookup(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    call(bundle, "desk_track_add", name="ops")
    a = call(bundle, "desk_task_add", track="web", title="A", priority=3)["task"]
    b = call(bundle, "desk_task_add", track="ops", title="B", priority=0)["task"]
    out = call(
        bundle,
        "desk_task_update",
        task=a["id"],
        status="blocked",
        title="A2",
        acceptance="",
        agent="ari",
    )
    assert out["changed"] == ["title", "status"]
    assert out["task"]["title"] == "A2" and out["task"]["status"] == "blocked"
    shown = call(bundle, "desk_task_show", task="web/a")
    assert shown["history"][-1]["event"] == "status"
    assert shown["history"][-1]["from"] == "open" and shown["history"][-1]["to"] == "blocked"
    listed = call(bundle, "desk_task_list")
    assert [t["id"] for t in listed["tasks"]] == [b["id"], a["id"]]  # priority 0 first
    assert call(bundle, "desk_task_list", status="blocked")["total"] == 1
    assert call(bundle, "desk_task_list", track="ops")["tasks"][0]["id"] == b["id"]
    before = snapshot(bundle.desk)  # a no-op update rewrites no Desk file
    unchanged = call(bundle, "desk_task_update", task=a["id"], status="blocked")
    assert unchanged["changed"] == [] and snapshot(bundle.desk) == before
    with pytest.raises(NotFound):
        call(bundle, "desk_task_show", task="t-0000000000000000zz")


def test_reads_are_pure(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    t = call(bundle, "desk_task_add", track="web", title="A")["task"]
    call(bundle, "desk_friction_add", title="slow disk")
    call(bundle, "desk_tip_add", title="run fast tests", tags=["testing"])
    before = snapshot(bundle.root)
    call(bundle, "desk_task_list")
    call(bundle, "desk_task_show", task=t["id"])
    call(bundle, "desk_friction_list")
    call(bundle, "desk_tip_list", tag="testing")
    call(bundle, "desk_feature")
    assert snapshot(bundle.root) == before


def test_corrupt_task_is_reported_and_left_alone(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    call(bundle, "desk_task_add", track="web", title="good")
    bad = bundle.desk / "web" / "broken" / "task.md"
    bad.parent.mkdir()
    bad.write_text("---\nid: [unclosed\n---\n")
    listed = call(bundle, "desk_task_list")
    assert listed["total"] == 1
    assert listed["problems"] and "desk/web/broken/task.md" in listed["problems"][0]
    with pytest.raises(CorruptFile):
        tasks.load_task(bundle, bad)
    assert bad.read_text() == "---\nid: [unclosed\n---\n"


@pytest.mark.parametrize("shape", ["no front matter", "first --- deleted"])
def test_task_md_without_an_id_is_a_problem_never_a_task(bundle: Bundle, shape: str) -> None:
    # a hand-made task.md with no front matter crashed list and show (status None)
    # and --json listed it as a task with id ""; the index indexed it as a task
    call(bundle, "desk_track_add", name="rel")
    real = call(bundle, "desk_task_add", track="rel", title="real")["task"]
    bad = bundle.desk / "rel" / "handmade" / "task.md"
    bad.parent.mkdir()
    if shape == "no front matter":
        text = "just notes\n"
    else:
        text = (bundle.root / real["locator"]).read_text().replace("---\n", "", 1)
        text = text.replace(real["id"], "t-zzzz").replace("title: real", "title: handmade")
    bad.write_text(text)
    before = snapshot(bundle.root, state=False)
    problem = "desk/rel/handmade/task.md: the front matter has no id"
    listed = ouro_json("desk", "task", "list", bundle=bundle)
    assert [t["id"] for t in listed["tasks"]] == [real["id"]]
    assert listed["problems"] == [problem]
    proc = run_ouro("desk", "task", "list", bundle=bundle)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert f"problem: {problem}" in proc.stdout + proc.stderr
    shown = run_ouro("desk", "task", "show", "rel/handmade", "--json", bundle=bundle)
    assert shown.returncode == 3, shown.stderr
    assert json.loads(shown.stdout)["error"]["message"] == problem
    text_show = run_ouro("desk", "task", "show", "rel/handmade", bundle=bundle)
    assert text_show.returncode == 3 and "Traceback" not in text_show.stderr
    assert problem in text_show.stderr
    rebuilt = ouro_json("index", "rebuild", bundle=bundle)
    assert [p["locator"] for p in rebuilt["problems"]] == ["desk/rel/handmade/task.md"]
    # the problem names its file and line once: not again inside its reason
    assert [p["reason"] for p in rebuilt["problems"]] == ["the front matter has no id"]
    found = ouro_json("desk", "search", "handmade", bundle=bundle)
    assert [r["locator"] for r in found["results"]] == []
    assert snapshot(bundle.root, state=False) == before
    assert bad.read_text() == text


def test_iterations_friction_tips(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    t = call(bundle, "desk_task_add", track="web", title="A")["task"]
    one = call(bundle, "desk_iteration_add", task=t["id"], text="tried X", agent="ari")
    two = call(bundle, "desk_iteration_add", task=t["id"], text="tried Y")
    assert one["locator"] == "desk/web/a/iterations/001.md" and two["iteration"] == 2
    meta, body = frontmatter.parse((bundle.root / one["locator"]).read_text())
    assert meta["task"] == t["id"] and meta["n"] == 1 and body == "tried X\n"
    assert call(bundle, "desk_task_show", task=t["id"])["iterations"] == [
        one["locator"],
        two["locator"],
    ]

    f1 = call(bundle, "desk_friction_add", title="old", task=t["id"], severity="high")
    f2 = call(bundle, "desk_friction_add", title="new", body="details", track="web")
    assert f1["friction"]["task"] == t["id"] and f2["friction"]["track"] == "web"
    listed = call(bundle, "desk_friction_list")["friction"]
    assert [f["title"] for f in listed] == ["new", "old"]
    with pytest.raises(InvalidInput):
        call(bundle, "desk_friction_add", title="x", severity="dire")

    first = call(bundle, "desk_tip_add", title="Use rg", tags=["Search", "search"])
    assert first["created"] is True and first["tip"]["tags"] == ["search"]
    again = call(bundle, "desk_tip_add", title="Use rg", body="faster", tags=["cli"])
    assert again["created"] is False and again["tip"]["created"] == first["tip"]["created"]
    assert [t["slug"] for t in call(bundle, "desk_tip_list", tag="cli")["tips"]] == ["use-rg"]
    assert call(bundle, "desk_tip_list", tag="search")["tips"] == []


def test_feature_and_unfeature(bundle: Bundle) -> None:
    call(bundle, "desk_track_add", name="web")
    t = call(bundle, "desk_task_add", track="web", title="A")["task"]
    out = call(bundle, "desk_feature", tracks=["web"], tasks=["web/a"])
    assert out["featured"] == {"tracks": ["web"], "tasks": [t["id"]], "notes": [], "lessons": []}
    call(bundle, "desk_feature", tracks=["web"])  # at most once
    meta, body = frontmatter.parse(featured.featured_path(bundle).read_text())
    assert meta == {"tracks": ["web"], "tasks": [t["id"]]}
    assert "ouro desk feature" in body  # the template's text is kept
    out = call(bundle, "desk_feature", tasks=[t["id"]], remove=True)
    assert out["featured"] == {"tracks": ["web"], "tasks": [], "notes": [], "lessons": []}
    with pytest.raises(NotFound):
        call(bundle, "desk_feature", tracks=["nope"])


def test_cli_round_trip(bundle: Bundle, tmp_path) -> None:
    body = tmp_path / "body.md"
    body.write_text("The body.\n")
    run_ouro("desk", "track", "add", "web", bundle=bundle, check=True)
    added = ouro_json(
        "desk",
        "task",
        "add",
        "web",
        "Do it",
        "--body-file",
        str(body),
        "--priority",
        "4",
        bundle=bundle,
    )
    tid = added["task"]["id"]
    shown = ouro_json("desk", "task", "show", tid, bundle=bundle)
    assert shown["body"] == "The body.\n" and shown["task"]["priority"] == 4
    text = run_ouro("desk", "task", "list", bundle=bundle, check=True).stdout
    header, row = text.splitlines()[:2]
    assert header.split() == ["TASK", "STATUS", "P", "TITLE", "HELD", "BY", "UPDATED"]
    assert row.split()[:4] == ["web/do-it", "open", "4", "Do"]
    missing = ouro_json(
        "desk", "task", "take", "t-0000000000000000zz", "--agent", "a", bundle=bundle
    )
    assert missing["error"]["type"] == "not_found"
