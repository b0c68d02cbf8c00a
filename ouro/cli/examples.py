"""Examples for every command, shown under "Examples:" in ``--help`` and in
docs/cli.md, and run in this order by ``tests/test_cli_help.py`` against a
scratch bundle (so an example that stops working fails the suite).

Each entry is ``(command line after 'ouro', what it does)``. ``<claim-id>``,
``<older-claim-id>``, ``<obligation-id>`` and ``<conflict-id>`` stand for an id printed by an
earlier command, ``<remote>`` for a git remote (the test fills them in). Every command path (agent tools
and the other commands) must have at least one example; a test checks that.
"""

from __future__ import annotations

Example = tuple[str, str]

EXAMPLES: dict[tuple[str, ...], tuple[Example, ...]] = {
    # --- bundle ----------------------------------------------------------------
    ("init",): (
        ("init ~/agent.ouro --agent ada", "create a bundle for the agent ada"),
        ("init ~/agent.ouro --repair", "mend a bundle.json that no command opens"),
    ),
    ("info",): (("info", "what is in the bundle and where it is"),),
    ("orient",): (
        ("orient", "the orientation packet a new session starts from"),
        ("orient --budget 2000", "the same, within 2000 characters"),
    ),
    ("help",): (
        ("help", "list the concepts and commands"),
        ("help locators", "what a locator is and how to open one"),
    ),
    ("config", "set"): (("config set color never", "never colour the output"),),
    ("config", "get"): (("config get color --show-origin", "the value and where it came from"),),
    ("config", "unset"): (("config unset color", "back to the next source down"),),
    ("config", "list"): (("config list --show-origin", "every setting and where it came from"),),
    # --- arc -------------------------------------------------------------------
    ("arc", "ask"): (('arc ask "fix the login bug"', "record what you are asked to do now"),),
    ("arc", "next"): (
        ('arc next "run the tests" --stop-before "git push"', "the next safe action"),
    ),
    ("arc", "note"): (('arc note "tests are slow today"', "a short flight-recorder note"),),
    ("arc", "blocker"): (('arc blocker "waiting for credentials"', "why work cannot go on"),),
    ("arc", "unblock"): (("arc unblock", "clear every active blocker"),),
    ("arc", "handoff"): (('arc handoff "login fix half done"', "a note for the next session"),),
    ("arc", "confirm"): (("arc confirm", "the recorded ask still holds (after a handoff)"),),
    ("arc", "checkpoint"): (("arc checkpoint", "rebuild the checkpoint; mark it safe"),),
    ("arc", "resume"): (("arc resume", "can I continue, and with what?"),),
    ("arc", "query"): (
        ("arc query doing", "the current ask and next action"),
        ("arc query owe", "open obligations and return routes"),
    ),
    ("claim", "add"): (
        (
            'claim add "the README names the test command" --check "grep -q pytest README.md"',
            "a claim with the check that proves it (run in the bundle's parent folder)",
        ),
        (
            'claim add "the README says how to install" --check "grep -qi install README.md"',
            "another claim",
        ),
    ),
    ("claim", "verify"): (("claim verify <claim-id>", "run the check; exit 1 if it fails"),),
    ("claim", "evidence"): (
        (
            'claim evidence <claim-id> --command "grep -q pytest README.md" --exit-code 0',
            "attach a receipt of a check you ran yourself",
        ),
    ),
    ("claim", "list"): (("claim list --status verified", "verified claims, status derived now"),),
    ("claim", "update"): (
        (
            'claim update <claim-id> --check "pytest -q tests/test_login.py"',
            "fix a typo in its check",
        ),
    ),
    ("claim", "supersede"): (
        ("claim supersede <older-claim-id> --by <claim-id>", "one claim replaces another"),
    ),
    ("obligation", "add"): (
        (
            'obligation add "send the release notes" --to ari --due 2030-01-31',
            "something owed, to whom, by when",
        ),
    ),
    ("obligation", "list"): (("obligation list --status open", "what is still owed"),),
    ("obligation", "close"): (("obligation close <obligation-id>", "mark it done"),),
    # --- desk ------------------------------------------------------------------
    ("desk", "track", "add"): (
        ('desk track add release --description "ship 1.0"', "a track to group tasks"),
    ),
    ("desk", "task", "add"): (
        (
            'desk task add release "Document the tests" --priority 1 --check "grep -q pytest README.md"',
            "a task with its check command",
        ),
    ),
    ("desk", "task", "list"): (("desk task list --status open", "open tasks, most urgent first"),),
    ("desk", "task", "show"): (("desk task show release/document-the-tests", "one task in full"),),
    ("desk", "task", "update"): (
        ("desk task update release/document-the-tests --status active", "start work on a task"),
    ),
    ("desk", "task", "take"): (
        ("desk task take release/document-the-tests", "hold the task for 30 minutes, as you"),
    ),
    ("lock", "take"): (
        ("lock take src/parser --reason 'splitting the lexer' --ttl 1h", "announce your edits"),
    ),
    ("lock", "release"): (("lock release", "release every lock you hold"),),
    ("lock", "list"): (("lock list --path src/parser/lex.py", "who holds this file"),),
    ("message", "send"): (
        ("message send bo 'Is the parser API frozen?' --kind question", "ask a peer"),
    ),
    ("message", "reply"): (("message reply m-01abc 'Yes, until Friday'", "answer it"),),
    ("message", "read"): (("message read", "read every unread message"),),
    ("message", "list"): (("message list --unread", "what is waiting for you"),),
    ("message", "peer"): (("message peer bo ../bo.ouro", "where bo's bundle is"),),
    ("message", "retry"): (("message retry", "deliver what was queued"),),
    ("desk", "ready"): (
        ("desk ready", "what you can pick up now: open, unblocked, not held"),
        ("desk ready --track release --limit 3", "the top three of one track"),
    ),
    ("desk", "task", "verify"): (
        ("desk task verify release/document-the-tests", "run its check; done needs a pass"),
    ),
    ("desk", "task", "release"): (
        ("desk task release release/document-the-tests", "let others take it"),
    ),
    ("desk", "iteration", "add"): (
        ('desk iteration add release/document-the-tests "lexer done"', "record a round of work"),
    ),
    ("desk", "friction", "add"): (
        ('desk friction add "CI takes 20 minutes" --severity high', "something in the way"),
    ),
    ("desk", "friction", "list"): (("desk friction list", "friction, newest first"),),
    ("desk", "tip", "add"): (
        ('desk tip add "Run tests with -x" --tag testing', "a tip for later sessions"),
    ),
    ("desk", "tip", "list"): (("desk tip list --tag testing", "tips with a tag"),),
    ("desk", "feature"): (("desk feature --track release", "show the track first in orient"),),
    ("desk", "search"): (
        ("desk search parser", "everything on the Desk that mentions parser"),
        ("desk search --kind task --status open", "the newest open tasks"),
    ),
    # --- the record --------------------------------------------------------------
    ("diary", "write"): (
        ('diary write "Ari prefers short replies" --about ari', "a fact, with provenance"),
    ),
    ("diary", "reflect"): (('diary reflect "A calm day; shipped the lexer."', "today's note"),),
    ("diary", "consult"): (
        ("diary consult replies", "facts and reflections that mention replies"),
        ("diary consult --since 2026-01-01", "everything since a date, newest first"),
    ),
    ("facts", "search"): (("facts search --about ari", "the newest facts about ari"),),
    ("notes", "write"): (
        ('notes write "How we release" --tag release --body-file -', "a note, body on stdin"),
    ),
    ("notes", "consult"): (("notes consult release", "notes that mention release"),),
    ("record", "redact"): (
        (
            'record redact desk/_record/notes/how-we-release.md --match "Tag, build"',
            "take a secret out of a record for good",
        ),
    ),
    ("diary", "rebuild-entities"): (
        ("diary rebuild-entities", "regenerate entities.json after a merge"),
    ),
    ("notes", "rebuild-manifest"): (
        ("notes rebuild-manifest", "regenerate the notes manifest after a hand edit"),
    ),
    # --- index -----------------------------------------------------------------
    ("index", "status"): (("index status", "is the search index fresh?"),),
    ("index", "sync"): (("index sync", "apply hand edits to the index"),),
    ("index", "rebuild"): (
        ("index rebuild", "rebuild the index from the files"),
        ("index rebuild --no-vectors", "the word index now; vectors at the next sync"),
    ),
    ("watch",): (("watch --quiet", "keep the index fresh while you edit by hand"),),
    # --- sentinel ----------------------------------------------------------------
    ("sentinel", "refresh"): (("sentinel refresh", "write a receipt; exit 1 if blocked"),),
    ("sentinel", "status"): (("sentinel status", "the latest verdict and what to repair"),),
    ("drill",): (
        ("drill erase", "prove the checkpoint can be rebuilt from the log"),
        ("drill", "every recovery drill; exit 1 naming what broke"),
    ),
    # --- habits ------------------------------------------------------------------
    ("habits", "list"): (("habits list", "habits, whether due, last run"),),
    ("habits", "show"): (("habits show tidy", "one habit and its tool policy"),),
    ("habits", "due"): (("habits due", "which habits are due now"),),
    ("habits", "run"): (("habits run tidy", "run a habit now"),),
    ("habits", "last"): (("habits last tidy", "the receipt of its last run"),),
    ("habits", "tick"): (("habits tick", "run every due habit once"),),
    ("habits", "install"): (("habits install cron", "print the crontab line (add --write)"),),
    ("surface",): (
        (
            'surface "the deploy key expired" --to family --reason needed_input',
            "ask for help (from a habit run: checked against its envelope)",
        ),
    ),
    ("surface", "list"): (("surface list", "what habits surfaced to you, waiting"),),
    ("surface", "ack"): (("surface ack ob-01j…", "acknowledge one: it leaves the packet"),),
    # --- hosts and migration -----------------------------------------------------
    ("hook", "install"): (
        ("hook install claude --dry-run", "show the Claude Code hooks ouro would add"),
    ),
    ("hook", "doctor"): (
        ("hook doctor claude", "check the install end to end; exit 1 on a problem"),
    ),
    ("hook", "plugin"): (
        ("hook plugin claude ~/ouro-claude-plugin", "a Claude Code plugin: claude --plugin-dir"),
        ("hook plugin codex ~/ouro-codex-plugin", "a Codex plugin in a local marketplace"),
    ),
    ("guide",): (
        ("guide", "the operating guide agents get"),
        ("guide --file AGENTS.md", "put it into AGENTS.md between markers"),
    ),
    ("hook", "claude"): (
        ("hook claude SessionStart < payload.json", "what Claude Code runs (host JSON on stdin)"),
    ),
    ("hook", "codex"): (
        ("hook codex SessionStart < payload.json", "what Codex runs (host JSON on stdin)"),
    ),
    ("hook", "gemini"): (
        ("hook gemini BeforeAgent < payload.json", "what Gemini CLI runs (host JSON on stdin)"),
    ),
    ("hook", "pi"): (
        ("hook pi SessionStart < payload.json", "what ouro's Pi extension runs (Pi's event JSON)"),
    ),
    ("hook", "opencode"): (
        ("hook opencode SessionStart < payload.json", "what ouro's OpenCode plugin runs"),
    ),
    ("sync", "init"): (
        ("sync init --remote <remote>", "give the bundle its own git history and a remote"),
    ),
    ("sync",): (("sync", "commit, fetch, merge losing nothing, push"),),
    ("sync", "clone"): (
        ("sync clone <remote> second.ouro", "join the bundle from a second machine"),
    ),
    ("sync", "status"): (("sync status", "how the last sync went; open conflicts"),),
    ("sync", "habit"): (("sync habit --cadence 1h", "sync every hour as a habit"),),
    ("sync", "resolve"): (("sync resolve <conflict-id>", "after reading both versions"),),
    ("workbench",): (
        ("workbench --port 0 --no-open", "serve the read-only web view on a free port"),
    ),
    ("workbench", "build"): (("workbench build site", "write it as a static site into site/"),),
    ("mcp",): (("mcp", "serve the tools to an MCP client on stdio"),),
    ("migrate",): (
        ("migrate --dry-run", "show how a legacy bundle would move"),
        (
            "migrate --dry-run --plan plan.json",
            "write each journal entry's proposed route to plan.json for review",
        ),
        ("migrate --yes --plan plan.json", "apply, routing journal entries as plan.json says"),
    ),
    ("demo",): (("demo", "a two-minute tour on a scratch bundle"),),
    ("completion",): (("completion bash", "the bash completion script (eval it in ~/.bashrc)"),),
}


def examples_for(path: tuple[str, ...]) -> tuple[Example, ...]:
    return EXAMPLES.get(path, ())
