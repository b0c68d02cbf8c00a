"""Soak: nothing lost, nothing escapes. Prints the figures; the soak tests
(``tests/soak/``, marker ``soak``) run the same scenarios and assert them.

    python bench/soak.py            # CI size (a few minutes on 2 cores)
    python bench/soak.py --full     # full size: 8 x 1,000 diary writes, 100 SIGKILLs

Scenarios, each on its own fresh bundle:

- ``concurrent``: N processes x M ``diary_write`` calls through the public tool
  path (``ouro.api.call``, the library behind the CLI and MCP) with the
  index live: torn lines, lost facts, errors, and index facts vs file facts;
  writes/s beside a baseline from the same run (the same processes doing bare
  locked ``append_jsonl`` + fsync, process start included in both).
- ``kills``: K SIGKILLs at random moments across every writer (diary write
  and reflect, notes, arc note and ask, claims, obligations, task update,
  tips, friction, sentinel refresh), then the next write of each: torn
  lines, unreadable JSON files, temp files left.
- ``disk_full``: a real 8 MB tmpfs (root only; skipped with the reason
  otherwise), filled to 0 bytes and to a few KB free; every write command run
  as a real CLI process: clear errors, tracebacks, partial writes (files
  changed by a command that failed), then everything works again once space
  is freed.
- ``bad_input``: a corpus of bad text (lone surrogates, NUL, one character
  over the limit) for every text field of every tool through the CLI and
  MCP (a real ``ouro mcp`` process fed raw JSON-RPC lines), plus hook stdin
  cases: clear errors, tracebacks, hangs, and the bundle hashed before and
  after (``state/`` -- locks, the index -- excluded: machine state).
- ``reads``: every read-only tool and read command, text and ``--json``, the
  bundle (every file, content and mtime, ``state/`` and the index database
  included; only SQLite's ``-wal``/``-shm``, which every SQLite reader
  updates, left out) snapshotted before and after each.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import multiprocessing as mp
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ouro import edge, registry  # noqa: E402
from ouro.api import call  # noqa: E402
from ouro.bundle import Bundle  # noqa: E402
from ouro.store.jsonl import read_jsonl  # noqa: E402

SIZES: dict[str, dict[str, int]] = {
    "ci": {"procs": 8, "writes": 150, "kills": 30},
    "full": {"procs": 8, "writes": 1000, "kills": 100},
}
Figures = dict[str, Any]


# --- bundle inspection ---------------------------------------------------------


def integrity(root: Path) -> Figures:
    """Torn/bad JSONL lines, unreadable JSON files and temp files under ``root``."""
    torn = bad_json = temps = 0
    temp_names: list[str] = []
    for path in root.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if path.name.endswith(".tmp"):
            temps += 1
            temp_names.append(rel)
        elif path.suffix == ".jsonl":
            torn += len(read_jsonl(path).bad)
        elif path.suffix == ".json" and not rel.startswith("state/"):
            try:
                json.loads(path.read_bytes())
            except ValueError:
                bad_json += 1
    return {"torn": torn, "badJson": bad_json, "temps": temps, "tempNames": temp_names[:10]}


def tree_hash(root: Path, *, skip_state: bool = True) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if skip_state and (rel == "state" or rel.startswith("state/")):
            continue
        digest.update(rel.encode() + b"\0")
        if path.is_file() and not path.is_symlink():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[path.relative_to(root).as_posix()] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                st.st_mtime_ns,
            )
    return out


# --- 1. concurrent diary writes --------------------------------------------------


def _diary_worker(root: str, worker: int, writes: int, tag: str, out: Any) -> None:
    bundle = Bundle.open(root)
    errors = 0
    for i in range(writes):
        text = f"soak {tag} worker {worker} wrote fact {i} zq{(worker * 7919 + i) % 100003}"
        try:
            call("diary_write", bundle, {"text": text, "about": [f"w{worker}"], "force": True})
        except Exception as exc:  # counted and reported, never hidden
            errors += 1
            print(f"worker {worker} write {i}: {type(exc).__name__}: {exc}", file=sys.stderr)
    out.put(errors)


def _bare_worker(path: str, worker: int, writes: int, out: Any) -> None:
    from ouro.store.jsonl import append_jsonl

    for i in range(writes):
        append_jsonl(Path(path), [{"worker": worker, "i": i, "text": f"bare fact {i}"}])
    out.put(0)


def _bare_rate(base: Path, procs: int, writes: int) -> float:
    """Baseline: the same number of processes doing bare locked appends + fsync."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    target = base / "bare.jsonl"
    workers = [
        ctx.Process(target=_bare_worker, args=(str(target), w, writes, out)) for w in range(procs)
    ]
    started = time.perf_counter()
    for p in workers:
        p.start()
    for _ in workers:
        out.get(timeout=3600)
    seconds = time.perf_counter() - started
    for p in workers:
        p.join(60)
    return procs * writes / seconds


def concurrent(base: Path, procs: int, writes: int) -> Figures:
    bundle = Bundle.init(base / "concurrent.ouro", agent="soak")
    from ouro.index.sync import sync

    sync(bundle)  # the index exists, so every write also writes through to it
    tag = f"t{time.time_ns() % 10**9}"
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    started = time.perf_counter()
    workers = [
        ctx.Process(target=_diary_worker, args=(str(bundle.root), w, writes, tag, out))
        for w in range(procs)
    ]
    for p in workers:
        p.start()
    errors = sum(out.get(timeout=3600) for _ in workers)
    for p in workers:
        p.join(60)
    seconds = time.perf_counter() - started
    read = read_jsonl(bundle.record / "diary" / "facts.jsonl")
    texts = {r.get("text") for r in read.records}
    expected = {
        f"soak {tag} worker {w} wrote fact {i} zq{(w * 7919 + i) % 100003}"
        for w in range(procs)
        for i in range(writes)
    }
    sync(bundle)
    from ouro.index.sync import status

    counts = status(bundle)["counts"]
    bare = _bare_rate(base, procs, writes)
    return {
        "writes": procs * writes,
        "processes": procs,
        "seconds": round(seconds, 1),
        "writesPerSecond": round(procs * writes / seconds),
        "baselineBareAppendsPerSecond": round(bare),
        "errors": errors,
        "torn": len(read.bad),
        "lost": len(expected - texts),
        "fileFacts": len(read.records),
        "indexFacts": counts.get("fact"),
        "exitCodes": sorted({p.exitcode for p in workers}),
    }


# --- 2. SIGKILLs across every writer ---------------------------------------------


def _writers() -> dict[str, Callable[[Bundle, int], Any]]:
    def tool(name: str, args: Callable[[int], dict[str, Any]]) -> Callable[[Bundle, int], Any]:
        return lambda bundle, i: call(name, bundle, args(i))

    def task_ref(bundle: Bundle) -> str:
        from ouro.desk.tasks import find_task

        return find_task(bundle, "soak/kill-target").id

    return {
        "diary_write": tool(
            "diary_write",
            lambda i: {"text": f"kill fact {time.time_ns()} {i}", "about": ["k"], "force": True},
        ),
        "diary_reflect": tool("diary_reflect", lambda i: {"text": f"reflection {i} " * 20}),
        "notes_write": tool(
            "notes_write", lambda i: {"title": f"Kill note {i % 4}", "body": f"{i}\n" * 500}
        ),
        "arc_note": tool("arc_note", lambda i: {"text": f"note {i}"}),
        "arc_ask": tool("arc_ask", lambda i: {"text": f"ask {i}"}),
        "claim_add": tool("claim_add", lambda i: {"text": f"claim {i}", "authority": "agent"}),
        "obligation_add": tool("obligation_add", lambda i: {"what": f"owe {i}", "to": "ari"}),
        "desk_task_update": lambda bundle, i: call(
            "desk_task_update", bundle, {"task": task_ref(bundle), "priority": i % 9}
        ),
        "desk_tip_add": tool("desk_tip_add", lambda i: {"title": f"tip {time.time_ns()} {i}"}),
        "desk_friction_add": tool(
            "desk_friction_add", lambda i: {"title": f"friction {time.time_ns()} {i}"}
        ),
        "sentinel_refresh": tool("sentinel_refresh", lambda i: {"trigger": "manual_cli"}),
    }


def _kill_child(root: str, writer: str, ready: Any) -> None:
    bundle = Bundle.open(root)
    write = _writers()[writer]
    i = 0
    while True:
        write(bundle, i)
        i += 1
        ready.set()


def kills(base: Path, count: int, seed: int = 7) -> Figures:
    bundle = Bundle.init(base / "kills.ouro", agent="soak")
    call("desk_track_add", bundle, {"name": "soak"})
    call("desk_task_add", bundle, {"track": "soak", "title": "kill target"})
    from ouro.index.sync import sync

    sync(bundle)
    writers = list(_writers())
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["ouro.api", "ouro.api.record", "ouro.api.arc"])
    rng = random.Random(seed)
    killed: dict[str, int] = dict.fromkeys(writers, 0)
    for n in range(count):
        writer = writers[n % len(writers)]
        ready = ctx.Event()
        child = ctx.Process(target=_kill_child, args=(str(bundle.root), writer, ready))
        child.start()
        ready.wait(60)  # at least one whole write, then a random moment mid-stream
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(30)
        killed[writer] += 1
    before = integrity(bundle.root)
    next_errors: list[str] = []
    for name, write in _writers().items():  # the next write of every writer
        try:
            # two calls: a task update that sets the value the task already has
            # writes nothing, so one of two different values is the next write
            write(bundle, 10**6)
            write(bundle, 10**6 + 1)
        except Exception as exc:  # counted and reported, never hidden
            next_errors.append(f"{name}: {type(exc).__name__}: {exc}")
    after = integrity(bundle.root)
    return {
        "kills": count,
        "writers": len(writers),
        "tornBeforeNextWrite": before["torn"],
        "tempsBeforeNextWrite": before["temps"],
        "torn": after["torn"],
        "badJson": after["badJson"],
        "temps": after["temps"],
        "tempNames": after["tempNames"],
        "nextWriteErrors": next_errors,
    }


# --- 3. disk full on a real tmpfs ---------------------------------------------------


def _cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "ouro.cli", "--bundle", str(root), *args],
        capture_output=True,
        text=True,
        input=stdin or "",
        env=env,
        timeout=120,
    )


@contextlib.contextmanager
def small_tmpfs(base: Path, size: str = "8m") -> Iterator[Path | str]:
    """A mounted tmpfs, or the reason there is none."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        yield "not root: mounting a tmpfs needs root"
        return
    mnt = base / "tmpfs"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        yield f"cannot mount a tmpfs: {proc.stderr.strip()}"
        return
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path, leave: int) -> Path:
    filler = mnt / f"filler-{leave}"
    with open(filler, "ab") as fh:
        while shutil.disk_usage(mnt).free > leave:
            free = shutil.disk_usage(mnt).free
            try:
                fh.write(b"\0" * max(4096, min(1 << 20, free - leave)))
                fh.flush()
            except OSError:
                break
    return filler


WRITE_COMMANDS: list[tuple[str, ...]] = [
    ("diary", "write", "disks fill up when you least expect it", "--about", "disk"),
    ("diary", "reflect", "a day spent freeing space " * 40),
    ("notes", "write", "Disk runbook", "--body-file", "-"),
    ("arc", "note", "the disk is full " * 20),
    ("arc", "ask", "free some space " * 20),
    ("arc", "next", "delete old logs"),
    ("claim", "add", "the disk has room", "--authority", "agent"),
    ("obligation", "add", "tell ops", "--to", "ops"),
    ("desk", "task", "add", "ops", "clean the disk"),
    ("desk", "tip", "add", "check df first"),
    ("desk", "friction", "add", "disk keeps filling"),
    ("sentinel", "refresh"),
    ("index", "sync"),
]


def disk_full(base: Path) -> Figures:
    with small_tmpfs(base) as mnt:
        if isinstance(mnt, str):
            return {"skipped": mnt}
        root = mnt / "full.ouro"
        bundle = Bundle.init(root, agent="soak")
        for args in (("desk", "track", "add", "ops"), ("diary", "write", "seed", "--about", "x")):
            _cli(root, *args)
        runs = clear = tracebacks = partial = succeeded = 0
        problems: list[str] = []
        done: list[str] = []
        for leave in (0, 3000):
            filler = fill(mnt, leave)
            for args in WRITE_COMMANDS:
                before = tree_hash(root)
                proc = _cli(root, *args, stdin="full disk runbook\n" * 300)
                runs += 1
                out = proc.stdout + proc.stderr
                if "Traceback" in out:
                    tracebacks += 1
                    problems.append(f"{' '.join(args[:2])}: traceback")
                elif proc.returncode == 0:
                    succeeded += 1  # durable; a derived file may be stale (warned)
                    done.append(" ".join(args[:2]) + (" (warned)" if "warning" in out else ""))
                elif proc.returncode in (1, 3) and "error:" in out and "hint:" in out:
                    clear += 1
                    if tree_hash(root) != before:
                        partial += 1
                        problems.append(f"{' '.join(args[:2])}: failed but changed files")
                else:
                    problems.append(
                        f"{' '.join(args[:2])}: unclear ({proc.returncode}) {out!r:.200}"
                    )
            filler.unlink()
        # space again: every writer works, and nothing torn or left behind
        after_errors = [
            " ".join(a[:2]) for a in WRITE_COMMANDS if _cli(root, *a, stdin="ok\n").returncode
        ]
        state = integrity(root)
        return {
            "tmpfs": "8 MB",
            "commands": runs,
            "clearErrors": clear,
            "succeeded": succeeded,
            "succeededCommands": done,
            "tracebacks": tracebacks,
            "partialWrites": partial,
            "unclear": len(problems) - tracebacks - partial,
            "problems": problems[:10],
            "failuresAfterSpaceFreed": after_errors,
            "torn": state["torn"],
            "temps": state["temps"],
            "bundle": str(bundle.root),
        }


# --- 4. the bad-input corpus ----------------------------------------------------------


def text_fields() -> list[tuple[registry.Tool, str, bool]]:
    """(tool, field, is_list) for every string or list-of-string input (``ouro.spec``)."""
    from ouro.spec import spec_of

    out = []
    for tool in registry.TOOLS:
        for param in spec_of(tool.method()):
            if param.kind == "str" or (param.kind == "list" and param.item_kind == "str"):
                out.append((tool, param.name, param.kind == "list"))
    return out


def bad_values(tool: str, field: str) -> dict[str, str]:
    from ouro.spec import spec_of

    limit = next(p.limit for p in spec_of(registry.find(tool).method()) if p.name == field)
    return {
        "surrogate": "bad \udcff text",
        "nul": "bad \x00 text",
        "oversize": "x" * (limit + 1),
    }


def _cli_argv(tool: registry.Tool, args: dict[str, Any], files: Path) -> list[str]:
    """The command line of ``tool`` with ``args``, by the CLI's one rule (``ouro.cli.parse``)."""
    from ouro.cli.parse import flag
    from ouro.spec import spec_of

    argv = list(tool.path)
    spec = {p.name: p for p in spec_of(tool.method())}
    for param in spec.values():
        if param.positional and param.name in args:
            value = args[param.name]
            argv += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    for name, value in args.items():
        param = spec[name]
        if param.positional:
            continue
        if param.file_flag:
            path = files / f"{tool.name}.{name}"
            path.write_bytes(str(value).encode("utf-8", "surrogateescape"))
            argv += [param.file_flag, str(path)]
            continue
        if param.kind == "bool":
            argv += [flag(param)] if value != param.default else []
        elif isinstance(value, list):
            for item in value:
                argv += [flag(param), str(item)]
        else:
            argv += [flag(param), str(value)]
    return argv


def _run_cli_inprocess(argv: list[str]) -> tuple[int, str, bool]:
    """(exit status, output, whether an exception escaped the CLI)."""
    from ouro.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO("")
    code = 0
    escaped = False
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
    except Exception as exc:  # an escaped exception is a traceback for a user
        escaped = True
        err.write(f"{type(exc).__name__}: {exc}")
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue() + err.getvalue(), escaped


class RawMcp:
    """``ouro mcp`` fed raw JSON-RPC lines (a client library would refuse to send some)."""

    def __init__(self, root: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ouro.cli", "mcp", "--bundle", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 1
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "0"},
        }
        self.request("initialize", init)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # \ud800 stays escaped
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 30) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                return None  # a hang
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


HOOK_INPUTS: dict[str, str] = {
    "empty": "",
    "not json": "{not json",
    "array": "[1, 2]",
    "nul in session_id": '{"session_id": "a\\u0000b"}',
    "lone surrogate": '{"session_id": "a\\ud800b"}',
    "huge session_id": json.dumps({"session_id": "s" * 5000}),
    "number as cwd": '{"cwd": 42}',
    "bad stop_hook_active": '{"stop_hook_active": "yes"}',
    "wrong event": '{"hook_event_name": "NotAnEvent"}',
    "list as session_id": '{"session_id": ["a"]}',
}


def bad_input(base: Path) -> Figures:
    from tests.tool_samples import SAMPLES, prepare_samples

    bundle = Bundle.init(base / "corpus.ouro", agent="soak")
    ctx = prepare_samples(bundle)
    from ouro.index.sync import sync

    sync(bundle)
    files = base / "corpus-files"
    files.mkdir()
    before = tree_hash(bundle.root)
    figures: dict[str, dict[str, int]] = {}
    problems: list[str] = []

    def tally(surface: str, outcome: str) -> None:
        figures.setdefault(surface, {"cases": 0, "clear": 0, "accepted": 0, "tracebacks": 0,
                                     "hangs": 0, "unclear": 0})  # fmt: skip
        figures[surface]["cases"] += 1
        figures[surface][outcome] += 1

    cases = []
    for tool, field, is_list in text_fields():
        base_args = {k: (v(ctx) if callable(v) else v) for k, v in SAMPLES[tool.name].items()}
        for kind, value in bad_values(tool.name, field).items():
            args = dict(base_args)
            args[field] = [value] if is_list else value
            cases.append((tool, field, kind, args))
        if is_list:
            args = dict(base_args)
            args[field] = ["x"] * (edge.MAX_ITEMS + 1)
            cases.append((tool, field, "too many items", args))

    # CLI (in-process: the same main() a process runs)
    for tool, field, kind, args in cases:
        argv = ["--bundle", str(bundle.root), *_cli_argv(tool, args, files)]
        code, out, escaped = _run_cli_inprocess(argv)
        if escaped or "Traceback" in out or '"internal"' in out:
            tally("cli", "tracebacks")
            problems.append(f"cli {tool.name}.{field} {kind}: {out[-200:]!r}")
        elif code == 0:
            tally("cli", "accepted")
            problems.append(f"cli {tool.name}.{field} {kind}: accepted")
        elif code in (1, 2, 3) and ("error" in out.lower()):
            tally("cli", "clear")
        else:
            tally("cli", "unclear")
            problems.append(f"cli {tool.name}.{field} {kind}: {code} {out[-200:]!r}")
    for raw in (b"\xff\xfe", b"\xc3(", b"ok\xed\xa0\x80"):  # invalid bytes in argv
        for command in (["arc", "ask"], ["diary", "write"], ["desk", "search"], ["init"]):
            argv = [*command, raw.decode("utf-8", "surrogateescape")]
            code, out, escaped = _run_cli_inprocess(["--bundle", str(bundle.root), *argv])
            ok = code == 2 and "not valid UTF-8" in out and not escaped
            tally("cli", "clear" if ok else "unclear")

    # MCP (one real server process)
    mcp = RawMcp(bundle.root)
    try:
        for tool, field, kind, args in cases:
            reply = mcp.request("tools/call", {"name": tool.name, "arguments": args})
            if reply is None:
                tally("mcp", "hangs")
                problems.append(f"mcp {tool.name}.{field} {kind}: no reply")
                break
            result = reply.get("result") or {}
            if "error" in reply or result.get("isError"):
                text = json.dumps(reply)
                if '"internal"' in text:
                    tally("mcp", "tracebacks")
                    problems.append(f"mcp {tool.name}.{field} {kind}: {text[:200]}")
                else:
                    tally("mcp", "clear")
            else:
                tally("mcp", "accepted")
                problems.append(f"mcp {tool.name}.{field} {kind}: accepted")
        for name in ("arc_\udcff", "no_such_tool", ""):
            reply = mcp.request("tools/call", {"name": name, "arguments": {}})
            tally("mcp", "clear" if reply is not None and "error" in reply else "hangs")
    finally:
        mcp.close()

    # hooks (the function both hook entry points run)
    from ouro.hooks.common import run_hook
    from ouro.hooks.handlers import HANDLERS
    from ouro.hooks.stdio import host_named

    env = {"OURO_BUNDLE": str(bundle.root)}
    for host in ("claude", "codex"):
        for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"):
            for label, text in HOOK_INPUTS.items():
                try:
                    outcome = run_hook(host_named(host), event, text, bundle_path=None, env=env,
                                       handlers=HANDLERS)  # fmt: skip
                except Exception as exc:  # an escaped exception is a traceback
                    tally("hooks", "tracebacks")
                    problems.append(f"hook {host} {event} {label}: {exc!r}")
                    continue
                said = " ".join(outcome.stderr)
                # silent on stdout, or the once-per-session visible failure notice
                quiet = outcome.stdout == "" or "injected nothing" in outcome.stdout
                if quiet and "nothing injected" in said:
                    tally("hooks", "clear")
                else:
                    tally("hooks", "unclear")
                    problems.append(f"hook {host} {event} {label}: {said[:120]!r}")
    after = tree_hash(bundle.root)
    total = {k: sum(f[k] for f in figures.values()) for k in next(iter(figures.values()))}
    return {
        **total,
        "bySurface": figures,
        "bundleUnchanged": before == after,
        "problems": problems[:15],
    }


# --- 5. reads change nothing ------------------------------------------------------------

#: SQLite's shared-memory index and log: every SQLite reader updates them by design
SQLITE_SHARED = ("ouro.sqlite3-shm", "ouro.sqlite3-wal")

READ_COMMANDS: list[tuple[str, ...]] = [
    ("orient",),
    ("index", "status"),
    ("habits", "due"),
    ("habits", "show", "sample"),
    ("habits", "last", "sample"),
    ("migrate", "--dry-run"),
    ("guide",),
]


def reads(base: Path) -> Figures:
    from tests.tool_samples import SAMPLES, prepare_samples

    bundle = Bundle.init(base / "reads.ouro", agent="soak")
    ctx = prepare_samples(bundle)
    for name in ("diary_write", "notes_write", "arc_ask", "desk_tip_add", "diary_reflect",
                 "habits_run"):  # fmt: skip
        call(name, bundle, {k: (v(ctx) if callable(v) else v)
                                       for k, v in SAMPLES[name].items()})  # fmt: skip
    from ouro.index.sync import sync

    sync(bundle)
    time.sleep(0.05)  # past the racy window, so a read has no reason to re-index
    sync(bundle)
    commands: list[list[str]] = [list(c) for c in READ_COMMANDS]
    for tool in registry.TOOLS:
        if tool.read_only:
            args = {k: (v(ctx) if callable(v) else v) for k, v in SAMPLES[tool.name].items()}
            commands.append(_cli_argv(tool, args, base))
    changed: list[str] = []
    failed: list[str] = []
    for argv in commands:
        for json_flag in ([], ["--json"]):
            before = snapshot(bundle.root)
            code, out, escaped = _run_cli_inprocess(["--bundle", str(bundle.root), *json_flag,
                                                     *argv])  # fmt: skip
            after = snapshot(bundle.root)
            # 1 = a negative outcome asked about (e.g. no sentinel receipt yet)
            if escaped or code not in (0, 1) or "Traceback" in out:
                failed.append(f"{' '.join(argv)}: {code} {out[-160:]!r}")
            diff = sorted(
                k
                for k in before.keys() | after.keys()
                if before.get(k) != after.get(k)
                and not k.endswith(SQLITE_SHARED)
                # a read may heal a machine-local cache under state/, never the record
                and not k.startswith("state/")
            )
            if diff:
                changed.append(f"{' '.join(argv)}: {diff[:3]}")
    return {
        "readCommands": len(commands) * 2,
        "filesChanged": len(changed),
        "changed": changed[:10],
        "failed": failed[:10],
    }


# --- main ----------------------------------------------------------------------------------


def run_all(size: str, base: Path | None = None) -> dict[str, Figures]:
    dims = SIZES[size]
    with tempfile.TemporaryDirectory(prefix="ouro-soak-") as tmp:
        where = base or Path(tmp)
        return {
            "concurrent": concurrent(where, dims["procs"], dims["writes"]),
            "kills": kills(where, dims["kills"]),
            "diskFull": disk_full(where),
            "badInput": bad_input(where),
            "reads": reads(where),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="full size (see module docstring)")
    parser.add_argument(
        "--only", choices=["concurrent", "kills", "disk_full", "bad_input", "reads"]
    )
    opts = parser.parse_args()
    size = "full" if opts.full else "ci"
    dims = SIZES[size]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ouro-soak-") as tmp:
        base = Path(tmp)
        runs: dict[str, Callable[[], Figures]] = {
            "concurrent": lambda: concurrent(base, dims["procs"], dims["writes"]),
            "kills": lambda: kills(base, dims["kills"]),
            "disk_full": lambda: disk_full(base),
            "bad_input": lambda: bad_input(base),
            "reads": lambda: reads(base),
        }
        for name, fn in runs.items():
            if opts.only and name != opts.only:
                continue
            t0 = time.perf_counter()
            figures = fn()
            figures.pop("bundle", None)
            print(f"{name} ({time.perf_counter() - t0:.1f}s): {json.dumps(figures)}", flush=True)
    print(f"soak ({size}) finished in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
