"""Sentinel: is the bundle enough for a fresh agent to resume after a wipe?

Files this package owns (all under ``arc/flight-recorder/context-loss-sentinel/``):

- ``latest.json``: the newest receipt (by ``generatedAt``, then ``id``), even
  when blocked; never replaced by an older one;
- ``latest-ready.json``: the newest receipt that was ready in every respect
  (the recovery anchor);
- ``history/YYYY-MM-DD.jsonl``: the append-only ledger, one line per receipt;
- ``receipts/<id>.json``: a bounded cache of full receipts (pruned on refresh,
  always keeping the ones ``latest`` and ``latest-ready`` name).

Modules: ``gauntlet`` (the eight pure checks), ``signals`` (outside and bundle
signals), ``receipts`` (refresh: the only writer, under
``state/locks/sentinel.lock``), ``status`` (pure read of the receipts).
The recovery drills (``ouro.drills``) sit above the sentinel and the packet
builder: they drive both on a temporary copy of the bundle.

Every byte written here passes through ``ouro.proof.redact`` first.
"""
