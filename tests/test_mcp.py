"""``ouro mcp`` driven by the SDK's own stdio client, against real bundles."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from ouro import registry
from ouro.bundle import Bundle
from ouro.mcp import build_server, instructions, served
from ouro.spec import json_schema, spec_of
from tests.conftest import ouro_json, record_snapshot, run_ouro, snapshot
from tests.mcp_client import json_of, session, text_of
from tests.tool_samples import SAMPLES, prepare_samples, resolve_sample

TIMEOUT = 60


def drive(
    root: Path,
    errlog: Path,
    body: Callable[[ClientSession], Awaitable[None]],
    tools: str | None = "all",
) -> None:
    """Run ``body`` against a fresh ``ouro mcp --tools TOOLS`` server on ``root``."""

    async def main() -> None:
        with anyio.fail_after(TIMEOUT), errlog.open("a") as log:
            async with session(root, errlog=log, tools=tools) as client:
                await body(client)

    anyio.run(main)


def test_lists_every_registry_tool_with_schema_and_hints(bundle: Bundle, tmp_path: Path) -> None:
    listed: list[types.Tool] = []

    async def body(client: ClientSession) -> None:
        listed.extend((await client.list_tools()).tools)

    drive(bundle.root, tmp_path / "server.log", body)
    assert [t.name for t in listed] == [t.name for t in registry.TOOLS]
    for mcp_tool, tool in zip(listed, registry.TOOLS, strict=True):
        assert mcp_tool.description == tool.description()
        assert mcp_tool.input_schema == json_schema(tool.method())
        assert mcp_tool.input_schema["type"] == "object"
        assert mcp_tool.input_schema["additionalProperties"] is False
        hints = mcp_tool.annotations
        assert hints is not None and hints.open_world_hint is tool.open_world
        # Absent hints take the MCP defaults: readOnly false, destructive true, idempotent false.
        assert bool(hints.read_only_hint) == tool.read_only
        assert bool(hints.idempotent_hint) == tool.idempotent
        if not tool.read_only:
            assert hints.destructive_hint is tool.destructive

    # Honest hints: a tool that runs a shell command says so.
    hints_by = {t.name: t.annotations for t in listed}
    for name in ("claim_verify", "habits_run"):
        assert hints_by[name] is not None
        assert hints_by[name].destructive_hint is True and hints_by[name].open_world_hint is True
    assert {t.name for t in registry.TOOLS if t.open_world} >= {"claim_verify", "habits_run"}


def test_default_server_is_lean_and_small_and_teaches_the_guide(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.guide import render

    listed: list[types.Tool] = []
    got: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        result = await client.list_tools()
        listed.extend(result.tools)
        got["size"] = len(result.model_dump_json(by_alias=True, exclude_none=True))
        with pytest.raises(MCPError, match="not served by this server"):
            await client.call_tool("drill", {})
        got["orient"] = json_of(await client.call_tool("orient", {"budget": 800}))

    drive(bundle.root, tmp_path / "server.log", body, tools=None)
    names = {t.name for t in listed}
    assert names == {t.name for t in registry.TOOLS if t.default} == {t.name for t in served()}
    # the seed's record tools, by the seed's names
    assert {"diary_write", "consult_diary", "search_facts", "consult_notes", "desk_search"} <= names
    assert {"orient", "arc_resume", "arc_ask", "arc_handoff", "claim_add", "info"} <= names
    # 21 tools with their full schemas (every limit stated), the seed's five record tools among them
    assert got["size"] <= 18_000, got["size"]
    assert got["orient"]["budget"] == 800 and got["orient"]["text"].startswith("# orient")
    assert len(got["orient"]["text"]) <= 800
    assert render(mcp=True) in instructions()
    assert build_server(bundle).instructions == instructions()


def test_every_registered_tool_has_a_sample() -> None:
    names = {tool.name for tool in registry.TOOLS}
    assert sorted(names - set(SAMPLES)) == [], "add these tools to tests/tool_samples.py"
    assert sorted(set(SAMPLES) - names) == [], "samples for tools that are not registered"


def test_calls_every_tool(bundle: Bundle, tmp_path: Path) -> None:
    ctx = prepare_samples(bundle)
    # Reads first, so a write sample cannot change what a read sample expects.
    ordered = sorted(registry.TOOLS, key=lambda t: not t.read_only)
    results: dict[str, Any] = {}
    failures: dict[str, str] = {}

    async def body(client: ClientSession) -> None:
        for tool in ordered:
            if tool.name not in SAMPLES:
                failures[tool.name] = "no sample in tests/tool_samples.py"
                continue
            result = await client.call_tool(tool.name, resolve_sample(tool.name, ctx))
            if result.is_error:
                failures[tool.name] = text_of(result)
            else:
                results[tool.name] = json_of(result)

    drive(bundle.root, tmp_path / "server.log", body)
    assert failures == {}
    assert set(results) == {t.name for t in registry.TOOLS}
    assert all(isinstance(r, dict) for r in results.values())


def test_read_only_tools_write_nothing(bundle: Bundle, tmp_path: Path) -> None:
    """A tool that declares readOnlyHint changes no file, not even an mtime --
    except the search index under state/index/, a cache that search may build."""
    ctx = prepare_samples(bundle)
    reads = [t for t in registry.TOOLS if t.read_only and t.name in SAMPLES]

    def truth() -> dict[str, tuple[bytes, int]]:
        return {
            k: v
            for k, v in record_snapshot(bundle.root).items()
            if not k.startswith("state/index/")
        }

    before = truth()

    async def body(client: ClientSession) -> None:
        for tool in reads:
            result = await client.call_tool(tool.name, resolve_sample(tool.name, ctx))
            assert not result.is_error, f"{tool.name}: {text_of(result)}"

    drive(bundle.root, tmp_path / "server.log", body)
    assert len(reads) > 1
    assert truth() == before


def test_result_is_the_object_the_cli_prints(bundle: Bundle, tmp_path: Path) -> None:
    got: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        got.update(json_of(await client.call_tool("info", {})))

    drive(bundle.root, tmp_path / "server.log", body)
    assert got == ouro_json("info", bundle=bundle)
    assert got["bundle"] == str(bundle.root)


def test_bad_arguments_are_a_tool_error_naming_the_field(bundle: Bundle, tmp_path: Path) -> None:
    required = next(
        (
            (tool.name, param.name)
            for tool in registry.TOOLS
            for param in spec_of(tool.method())
            if param.required
        ),
        None,
    )
    texts: list[str] = []

    async def body(client: ClientSession) -> None:
        extra = await client.call_tool("info", {"no_such_field": 1})
        assert extra.is_error
        texts.append(text_of(extra))
        assert extra.structured_content["error"]["type"] == "invalid_input"
        if required is not None:
            missing = await client.call_tool(required[0], {})
            assert missing.is_error
            texts.append(text_of(missing))
        # the server is still serving after refusing bad input
        json_of(await client.call_tool("info", {}))

    drive(bundle.root, tmp_path / "server.log", body)
    assert "no_such_field" in texts[0] and "hint:" in texts[0]
    if required is not None:
        assert texts[1].startswith(f"{required[0]}: {required[1]}: required")


def test_ouro_error_becomes_tool_error_with_message_and_hint(
    bundle: Bundle, tmp_path: Path
) -> None:
    """The server opened the bundle at start; a corrupt bundle.json afterwards is
    an OuroError from the tool, reported with its hint, and serving goes on."""
    original = bundle.meta_path.read_bytes()

    async def body(client: ClientSession) -> None:
        bundle.meta_path.write_text("{not json")
        broken = await client.call_tool("info", {})
        assert broken.is_error
        text = text_of(broken)
        assert text.startswith(f"{bundle.meta_path}: not valid JSON")
        assert f"\nhint: 'ouro init {bundle.root} --repair" in text
        assert broken.structured_content["error"]["type"] == "corrupt_file"
        assert "restore bundle.json from git" in broken.structured_content["error"]["hint"]
        bundle.meta_path.write_bytes(original)
        assert json_of(await client.call_tool("info", {}))["agent"] == "tester"

    drive(bundle.root, tmp_path / "server.log", body)


def test_locator_escape_and_not_found_are_tool_errors(bundle: Bundle, tmp_path: Path) -> None:
    """Arguments are held to the bundle: a locator leaving it is refused with a hint,
    and the refusal writes nothing."""
    before = snapshot(bundle.root)
    texts: dict[str, str] = {}

    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("dotdot", "claim_add", {"text": "x", "about": ["../outside.txt"]}),
        ("absolute", "claim_add", {"text": "x", "about": ["/etc/passwd"]}),
        ("missing", "desk_task_show", {"task": "nowhere/nothing"}),
    ]

    async def body(client: ClientSession) -> None:
        for key, name, args in calls:
            result = await client.call_tool(name, args)
            assert result.is_error, key
            texts[key] = text_of(result)

    drive(bundle.root, tmp_path / "server.log", body)
    assert "about: locator '../outside.txt' has an empty, '.' or '..' segment" in texts["dotdot"]
    assert "about: locator '/etc/passwd' is absolute" in texts["absolute"]
    assert "\nhint: use a bundle-relative path" in texts["dotdot"]
    assert texts["missing"].startswith("no track named 'nowhere'")
    assert "\nhint: create it with 'ouro desk track add nowhere'" in texts["missing"]
    assert snapshot(bundle.root) == before


def test_unknown_tool_is_a_protocol_error(bundle: Bundle, tmp_path: Path) -> None:
    async def body(client: ClientSession) -> None:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
        assert caught.value.code == types.INVALID_PARAMS
        assert "no tool named 'no_such_tool'" in caught.value.message
        assert "info" in caught.value.message  # the hint lists known tools

    drive(bundle.root, tmp_path / "server.log", body)


def test_unexpected_exception_is_a_tool_error_and_serving_goes_on(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process (``Server.handle``, what the stdio loop runs per line) so a tool can
    be made to crash."""
    import ouro.mcp

    real_call = ouro.mcp.call
    crashes = iter([True])

    def flaky_call(name: str, b: Any, arguments: Any) -> dict[str, Any]:
        if next(crashes, False):
            raise ZeroDivisionError("division by zero")
        return real_call(name, b, arguments)

    monkeypatch.setattr(ouro.mcp, "call", flaky_call)
    server = build_server(bundle)
    init = {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
    assert server.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})

    def info(mid: int) -> dict[str, Any]:
        params = {"name": "info", "arguments": {}}
        reply = server.handle(
            {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}
        )
        assert reply is not None and reply["id"] == mid
        result: dict[str, Any] = reply["result"]
        return result

    crashed = info(2)
    assert crashed["isError"] is True
    assert crashed["content"][0]["text"].startswith(
        "info failed: ZeroDivisionError: division by zero\nhint: this is a bug"
    )
    assert crashed["structuredContent"]["error"]["type"] == "internal"
    again = info(3)
    assert "isError" not in again
    assert again["structuredContent"]["bundle"] == str(bundle.root)


def test_legacy_bundle_is_refused_at_start(bundle: Bundle) -> None:
    (bundle.root / "diary").mkdir()
    proc = run_ouro("mcp", "--bundle", str(bundle.root), input="")
    assert proc.returncode == 3
    assert proc.stdout == ""  # stdout belongs to the protocol
    assert "uses the old layout (top-level diary/)" in proc.stderr
    assert "ouro migrate" in proc.stderr


def test_missing_bundle_is_refused_at_start(tmp_path: Path) -> None:
    proc = run_ouro("mcp", "--bundle", str(tmp_path / "nowhere"), input="")
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert "no bundle at" in proc.stderr and "ouro init" in proc.stderr


def test_bundle_comes_from_env_or_walk_up(bundle: Bundle, tmp_path: Path) -> None:
    """Without --bundle the server binds to $OURO_BUNDLE, else the nearest bundle."""
    request = (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        )
        + "\n"
    )
    proc = run_ouro("mcp", input=request, env={"OURO_BUNDLE": str(bundle.root)}, process=True)
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"]["name"] == "ouro"
    inside = bundle.root / "desk"
    walked = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "mcp"],
        input=request,
        capture_output=True,
        text=True,
        cwd=inside,
        timeout=TIMEOUT,
    )
    assert walked.returncode == 0, walked.stderr
    assert json.loads(walked.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "ouro"


def test_other_commands_do_not_import_mcp(bundle: Bundle) -> None:
    proc = run_ouro("info", bundle=bundle, env={"PYTHONPROFILEIMPORTTIME": "1"}, process=True)
    assert proc.returncode == 0, proc.stderr
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "ouro.info" in imported  # the import log is really there
    assert not {m for m in imported if m.split(".")[0] in ("mcp", "mcp_types")}
    code = (
        "import sys, ouro.registry, ouro.cli.run, ouro.cli.tree\n"
        "for t in ouro.registry.TOOLS: t.method()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_default_server_serves_the_seeds_five_record_tools(
    bundle: Bundle, tmp_path: Path
) -> None:
    """The seed's names, listed by the default server and each answering."""
    seed = {
        "diary_write": {"text": "staging uses the EU region", "about": ["staging"]},
        "consult_diary": {"query": "staging"},
        "search_facts": {"about": "staging"},
        "consult_notes": {},
        "desk_search": {"query": "staging"},
    }
    listed: set[str] = set()
    answers: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        listed.update(t.name for t in (await client.list_tools()).tools)
        for name, args in seed.items():
            result = await client.call_tool(name, args)
            assert not result.is_error, f"{name}: {text_of(result)}"
            answers[name] = json_of(result)

    drive(bundle.root, tmp_path / "server.log", body, tools=None)
    assert set(seed) <= listed
    assert not listed & {"diary_search", "facts_search", "notes_search"}  # no alias tools
    fact = answers["diary_write"]["locator"]
    for name in ("consult_diary", "search_facts", "desk_search"):
        assert [r["locator"] for r in answers[name]["results"]] == [fact], name
    assert answers["consult_notes"]["total"] == 0


def test_the_protocol_negotiates_versions_and_answers_with_json_rpc_error_codes(
    bundle: Bundle,
) -> None:
    """In-process through ``Server.serve`` (what ``ouro mcp`` runs on its stdio)."""
    import io

    from ouro.mcp import PROTOCOL_VERSIONS, REQUEST_LINE_LIMIT, _oversized
    from ouro.store.bounded import BoundedLines

    def init(mid: int, version: str) -> dict[str, Any]:
        params = {"protocolVersion": version, "capabilities": {},
                  "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
        return {"jsonrpc": "2.0", "id": mid, "method": "initialize", "params": params}

    def req(mid: Any, method: str, params: Any = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": mid, "method": method, "params": params}

    info = {"name": "info", "arguments": {}}
    messages: list[Any] = [
        req(1, "tools/list"),  # before initialize
        init(2, "1999-01-01"),  # unknown version: the newest is offered
        init(3, "2025-06-18"),  # a known one is echoed
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        req(4, "ping"),
        req(5, "resources/list"),
        req(6, "tools/call", {"name": 7}),
        req(7, "tools/call", info),
        req(8, "tools/call", info),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}},
        [req(9, "ping")],  # a batch: not a request
    ]
    lines = [json.dumps(m) for m in messages] + ["{not json", "[" * 5000 + "]" * 5000]
    out = io.BytesIO()
    raw = io.BytesIO(("\n".join(lines) + "\n").encode())
    build_server(bundle).serve(BoundedLines(raw, REQUEST_LINE_LIMIT, _oversized), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert by_id[1]["error"]["code"] == types.INVALID_PARAMS
    assert by_id[2]["result"]["protocolVersion"] == PROTOCOL_VERSIONS[-1]
    assert by_id[3]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[3]["result"]["serverInfo"]["name"] == "ouro"
    assert by_id[3]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert by_id[4]["result"] == {}
    assert by_id[5]["error"]["code"] == types.METHOD_NOT_FOUND
    assert by_id[6]["error"]["code"] == types.INVALID_PARAMS
    assert by_id[7]["result"]["structuredContent"]["bundle"] == str(bundle.root)
    # 8 was cancelled while 7 ran (it may have started already: then it is answered)
    unnumbered = [r["error"]["code"] for r in replies if r["id"] is None]
    assert unnumbered == [types.INVALID_REQUEST, types.PARSE_ERROR, types.PARSE_ERROR]
