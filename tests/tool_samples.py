"""A valid sample call for every registered tool.

``prepare_samples(bundle)`` puts a bundle in a state where every sample is
valid and returns a context dict; a sample value may be a callable taking that
dict (for ids that only exist at run time). The MCP and CLI parity tests call
every tool with these, and a test fails when a registered tool has no sample.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ouro.bundle import Bundle

Sample = dict[str, Any | Callable[[dict[str, Any]], Any]]

SAMPLES: dict[str, Sample] = {
    "bundle_info": {},
}


def prepare_samples(bundle: Bundle) -> dict[str, Any]:
    ctx: dict[str, Any] = {"bundle": bundle}
    return ctx


def resolve_sample(name: str, ctx: dict[str, Any]) -> dict[str, Any]:
    return {k: (v(ctx) if callable(v) else v) for k, v in SAMPLES[name].items()}
