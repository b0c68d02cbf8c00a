"""Sync results for people (``ouro sync`` and its subcommands)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.sync.repo import REMOTE, Project


def sync(result: dict[str, Any]) -> str:
    from ouro.sync.summary import describe

    lines = []
    committed = result.get("committed") or {}
    lines.append(f"committed: {describe(committed)}" if committed else "committed: nothing new")
    if result.get("remote"):
        lines.append(
            f"pulled: {result['pulledCommits']} commit(s) from {result['remote']}/{result['branch']}"
        )
        lines.append("pushed: " + ("yes" if result["pushed"] else "nothing to push"))
    else:
        lines.append(
            "remote: none (local history only; add one with 'ouro sync init --remote URL')"
        )
    for conflict in result.get("conflicts") or []:
        lines.append(
            f"conflict kept: {conflict['path']} ({conflict['kind']}; kept {conflict['kept']}) "
            f"-> {conflict['recordPath']}"
        )
    lines += [f"malformed line {m}" for m in result.get("malformed") or []]
    lines += [f"note: {n}" for n in result.get("notes") or []]
    return "\n".join(lines)


def status(result: dict[str, Any]) -> str:
    if not result["configured"]:
        return "sync: not configured (run 'ouro sync init --remote URL')"
    config, last = result["config"], result["last"]
    lines = [
        f"sync: {config.get('remote') or 'no remote'}/{config.get('branch')} "
        f"every {config.get('interval')}"
    ]
    if not last:
        lines.append("last sync: never")
    else:
        lines.append(f"last sync: {last.get('lastResult')} at {last.get('lastAttemptAt')}")
        if last.get("lastResult") == "failed":
            lines.append(f"error: {last.get('lastError')}")
        lines.append(f"last success: {last.get('lastSuccessAt') or 'never'}")
    for c in result["openConflicts"]:
        lines.append(f"open conflict {c['id']}: {c['path']} ({c['kind']}) -> {c['recordPath']}")
    lines += [f"problem: {p}" for p in result["problems"]]
    return "\n".join(lines)


def resolved(result: dict[str, Any]) -> str:
    return f"resolved {result['id']} ({result['path']})"


def habit(result: dict[str, Any]) -> str:
    return (
        f"wrote {result['locator']} (every {result['cadence']}); "
        "run it with 'ouro habits run sync', schedule it with 'ouro habits install'"
    )


def init(result: dict[str, Any]) -> str:
    how = (
        "created the bundle's own git repository"
        if result["repository"] == "created"
        else "adopted the bundle's own git repository"
    )
    lines = [
        f"sync configured: {how} at {result['gitDir']} "
        f"(branch {result['branch']}, every {result['interval']})",
        f"remote: {REMOTE} -> {result['url']}"
        if result["url"]
        else "remote: none (add one with: ouro sync init --remote URL)",
    ]
    if result.get("identity"):
        lines.append(
            f"identity: commits as {result['identity']} (git has none on this machine; "
            "set in the bundle's repository only)"
        )
    earlier = result.get("earlierSetup")
    if earlier:
        where = earlier.get("project") or "the repository around it"
        lines.append(
            f"earlier setup: an older ouro synced this bundle through {where}; it now has a "
            "history of its own. Check that repository's remotes (git -C "
            f"{where} remote -v): the older ouro may have repointed its origin"
        )
    if result.get("project"):
        p = result["project"]
        lines += Project(
            Path(p["root"]), p["bundlePath"], p["tracksBundleFiles"], p["ignoresBundle"]
        ).describe()
    if result["policyFilesChanged"]:
        lines.append("updated: " + ", ".join(result["policyFilesChanged"]))
    if result["untracked"]:
        lines.append(
            f"no longer tracked (derived, regenerated): {len(result['untracked'])} file(s)"
        )
    lines.append("next: ouro sync")
    return "\n".join(lines)


def clone(result: dict[str, Any]) -> str:
    head = result.get("remoteHead")
    said = f"; the remote's HEAD names {head}" if head and head != result["branch"] else ""
    first = (
        f"cloned {result['clonedFrom']} into {result['bundle']} (branch {result['branch']}{said})"
    )
    rest = init(result).splitlines()
    rest[-1] = f"next: ouro --bundle {result['bundle']} orient"
    return "\n".join([first, *rest])
