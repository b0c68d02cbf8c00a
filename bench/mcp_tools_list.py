"""Bench: the size of ``tools/list`` as an MCP client receives it from ``ouro mcp``.

    python bench/mcp_tools_list.py [--baseline PATH]

Starts the real server over stdio (the SDK's client, ``tests/mcp_client``),
asks for ``tools/list`` and prints the number of tools and the characters of
the result JSON (compact, as sent on the wire), for the default server and for
``--tools all``. With ``--baseline PATH`` (another checkout of ouro, e.g. the
previous commit) the same is measured with that code on ``PYTHONPATH`` in the
same run, so the two numbers compare like with like. This is context an agent
pays for at every session start; the issue's budget is 15,000 characters.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

# Run as a script, this folder is sys.path[0] and bench/mcp.py would shadow the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import (  # noqa: E402
    StdioServerParameters,
    get_default_environment,
    stdio_client,
)

REPO = _HERE.parent


async def measure(code: Path, root: Path, extra: list[str]) -> tuple[int, int]:
    env = get_default_environment() | {"PYTHONPATH": str(code)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ouro.cli", "mcp", "--bundle", str(root), *extra],
        env=env,
        cwd=code,  # 'python -m' puts the cwd first on sys.path
    )
    with open(os.devnull, "w") as sink:
        async with (
            stdio_client(params, errlog=sink) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            result = await client.list_tools()
    return len(result.tools), len(result.model_dump_json(by_alias=True, exclude_none=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="another ouro checkout to compare with")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from ouro.bundle import Bundle

    with tempfile.TemporaryDirectory() as tmp:
        root = Bundle.init(Path(tmp) / "bench.ouro").root
        rows = []
        if args.baseline:
            rows.append(("baseline (default)", anyio.run(measure, args.baseline, root, [])))
        rows.append(("this code (default: lean)", anyio.run(measure, REPO, root, [])))
        rows.append(("this code (--tools all)", anyio.run(measure, REPO, root, ["--tools", "all"])))
    print(f"{'server':<28} {'tools':>5} {'tools/list chars':>17}")
    for label, (count, chars) in rows:
        print(f"{label:<28} {count:>5} {chars:>17,}")


if __name__ == "__main__":
    main()
