"""``b.sentinel``: the recovery gauntlet and its receipts (``b.drill`` runs the drills)."""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.spec import P, verb

DEFAULT_KEEP = 50  # ouro.sentinel.receipts.DEFAULT_KEEP


def _triggers() -> tuple[str, ...]:
    from ouro.sentinel.receipts import TRIGGERS

    return TRIGGERS


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What a refresh reports: the receipt's verdict, anchor and failing checks."""
    receipt = result["receipt"]
    failing = [
        {"check": c["id"], "status": c["status"], "detail": c["detail"], "repair": c.get("repair")}
        for c in receipt["gauntlet"]["checks"]
        if c["status"] in ("warn", "fail")
    ]
    return {
        "receiptId": receipt["id"],
        "generatedAt": receipt["generatedAt"],
        "trigger": receipt["trigger"],
        "verdict": receipt["verdict"],
        "ready": receipt["ready"],
        "score": receipt["gauntlet"]["score"],
        "failing": failing,
        "signals": receipt["signals"],
        "recoveryAnchor": receipt["recoveryAnchor"],
        "locator": result["locator"],
        "latestReplaced": result["latestReplaced"],
        "latestReadyReplaced": result["latestReadyReplaced"],
        "pruned": len(result["pruned"]),
        "issues": result["issues"],
    }


class Sentinel(Namespace):
    @verb
    def refresh(
        self,
        *,
        trigger: Annotated[str, P("what prompted this refresh", choices=_triggers)] = "manual_cli",
        signals: Annotated[
            list[str | dict[str, Any]],
            P(
                'outside signals, each a JSON object such as {"kind": "provider_lane", '
                '"source": "anthropic", "status": "down", "verdictImpact": "blocked", '
                '"repairActor": "human-required", "repairCommand": "..."}; kind is '
                "provider_lane or sense"
            ),
        ] = [],
        keep: Annotated[
            int, P("receipt detail files to keep after pruning", min=1, max=100_000)
        ] = DEFAULT_KEEP,
        yes: Annotated[
            bool,
            P(
                "run a declared readiness check that was not confirmed in this bundle yet "
                "(read it first: 'ouro config list')"
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Run the recovery gauntlet (current ask, next safe action, stale guard,
        obligations, return routes, blockers, Desk record, source provenance), run the
        bundle's declared readiness checks and keep their results (the provider lane), read
        the sync state, add the outside signals you pass (provider lane, sense), and write
        one sentinel receipt: verdict ready|watch|blocked, score, recovery anchor."""
        from ouro.sentinel.receipts import refresh
        from ouro.sentinel.signals import parse_caller_signals

        parsed = parse_caller_signals(signals)
        return summary(
            refresh(
                self.folder,
                trigger=trigger,
                signals=parsed,
                keep=keep,
                yes=yes,
            )
        )

    @verb
    def status(self) -> dict[str, Any]:
        """Read the latest sentinel receipt: verdict, recovery anchor (latest ready receipt
        or the current blocker), failing checks and signals with repair commands. Writes
        nothing."""
        from ouro.sentinel.status import sentinel_status

        return sentinel_status(self.folder)
