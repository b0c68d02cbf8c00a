"""Host lifecycle hooks: ``ouro hook claude|codex|gemini|pi|opencode EVENT``.

A host (Claude Code, Codex, Gemini CLI: ``ouro.hooks.gemini`` maps its event
names onto these) runs the hook command at a lifecycle point, writes
one JSON object to its stdin and reads the hook's stdout. Pi and OpenCode have
no command hooks: ouro's TypeScript/JavaScript shims (``pi_extension.ts``,
``ouro.hooks.opencode``) run the same command for their events, and
``ouro.hooks.pi`` / ``ouro.hooks.opencode`` translate the event JSON at the edge. This package turns
those moments into Arc writes and orientation:

- ``SessionStart`` records ``session_started``, refreshes the sentinel
  (trigger ``session_start``) and injects the orientation packet;
- ``UserPromptSubmit`` records ``turn_accepted`` (never the prompt text) and
  injects only the packet items that changed since this session's last
  injection; silent when nothing changed;
- ``PreCompact`` records the compaction, rewrites the checkpoint and refreshes
  the sentinel; it injects nothing (the packet returns at ``SessionStart``
  with source ``compact``);
- ``Stop`` surfaces unverified claims and open obligations as a
  ``systemMessage``; it blocks only when installed with ``--block-on-debt``
  and never twice in a row (``stop_hook_active``);
- ``SessionEnd`` records ``session_ended``;
- ``PostToolUse`` / ``PostToolUseFailure`` record a receipt when the command
  is a declared check, ``observed-by-host`` only when the host's own transcript
  shows the call (``ouro.hooks.posttool``, ``ouro.hooks.transcript``); every
  later event of the session first settles receipts still waiting for the
  transcript (``ouro.hooks.common.run_hook``);
- ``PreToolUse`` warns when an edit overlaps another agent's path lock.

Files this package owns: ``state/hooks/<host>-<session>.json`` (the per-session
fingerprint of the last injected packet) and ``state/hooks/<host>-<session>
.receipts.json`` (the session's host receipt ledger, ``ouro.hooks.receipts``).
Everything else a hook changes is written by its owner: Arc events and the
checkpoint (``ouro.arc.recorder``), sentinel receipts (``ouro.sentinel``),
claim evidence (``ouro.arc.claims``) and task check events (``ouro.desk.tasks``).

Contract with the host: exit 0 always (a deliberate block is a JSON decision,
still exit 0); stdout is empty (never for Gemini CLI, ``Host.always_json``) or exactly one JSON object of the shape the host
accepts for that event; any failure (no bundle, legacy bundle, unreadable state,
bad stdin) injects nothing and writes one line to stderr. Host contracts are
cited in ``docs/hooks.md``.

Start-up is most of a hook's cost, so the one CLI path stays cheap
(``ouro.cli.run`` → ``ouro.cli.hook`` → ``ouro.hooks.stdio``) and this package
imports heavy modules only in the handler that needs them.
"""
