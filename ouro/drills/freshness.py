"""Drill ``evidence-freshness``: changing an evidenced source un-verifies a claim.

A source file is written, a claim about it is verified by ouro running its
declared check (``true``: only an observed run verifies), then the source
changes.
The claim must read stale_risky (not verified) in the claim list, be listed
as unverified by the resume, and show as ``[stale_risky]`` in the packet.
"""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.drills.harness import DrillAborted, Probe
from ouro.models.ids import new_id


def run(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.arc import claims, resume

    token = new_id("drill")
    locator = f"desk/_meta/drill-evidence-{token}.md"
    source = bundle.path(locator)
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(f"version 1 of {token}\n", encoding="utf-8")
    check = "true"
    claim = claims.add_claim(
        bundle, f"drill claim {token} holds", about=[locator], authority="test", check=check
    )
    cid = claim["id"]
    claims.verify_claim(bundle, cid, timeout=30, yes=True)

    def status() -> str:
        listed = claims.list_claims(bundle)
        if listed.get("claims") is None:
            raise DrillAborted(f"claims unreadable: {listed.get('unknown')}")
        return str(next(c["status"] for c in listed["claims"] if c["id"] == cid))

    where = f"ouro claim list  # {cid}"
    first = status()
    probe.expect(
        first == "verified", "an observed run of the check verifies the claim", first, look_at=where
    )
    source.write_text(f"version 2 of {token}: changed after the evidence\n", encoding="utf-8")
    after = status()
    probe.expect(
        after == "stale_risky",
        "after the source changed the claim is stale_risky",
        after,
        look_at=where,
    )
    state = resume.read_resume(bundle)
    probe.expect(
        cid in state["unverifiedClaimIds"],
        "the resume lists the claim as unverified",
        look_at="ouro arc query unverified",
    )
    text = orient.build_packet(bundle, budget=20_000).text
    probe.expect(
        f"{cid} [stale_risky]" in text,
        "the packet shows the claim as stale_risky",
        look_at="ouro orient",
    )
