"""Arc: live continuity.

Files this package owns (all under ``arc/`` of a bundle):

- ``flight-recorder/events/YYYY-MM-DD.jsonl``: append-only lifecycle events
  (``ouro.arc.recorder``), one UTC day per file;
- ``flight-recorder/latest.json``: the resume checkpoint, derived by folding
  the event log with the claim and obligation stores (``ouro.arc.fold``,
  ``ouro.arc.checkpoint``; read purely by ``ouro.arc.resume``);
- ``claims/<id>.json``: claims with evidence; status is derived on read
  (``ouro.arc.claims``, ``ouro.arc.claim_status``);
- ``obligations/<id>.json`` and ``obligations/inner/<id>.json`` (return
  obligations with a route) (``ouro.arc.obligations``).

Every string that reaches one of these files passes through
``ouro.proof.redact`` first. Every write takes the one Arc lock
(``state/locks/arc.lock``) so the checkpoint always folds a consistent view.
"""
