"""More than one machine: ``ouro sync`` moves a bundle through git (docs/sync.md).

Files this package owns:

- ``.git/`` in the bundle root (``repo``): the bundle's own repository, the
  only one ouro ever runs git in; a project repository around the bundle is
  never used or changed;
- ``.gitignore`` / ``.gitattributes`` in the bundle root (``setup``): machine
  state and derived files never travel; JSONL merges by union; JSON is never
  merged as text;
- ``state/sync/config.json`` and ``state/sync/status.json`` (``state``):
  machine-local settings and the last outcome (what the sentinel reads);
- ``arc/sync/conflicts/<cf-id>.json`` (``conflicts``): both versions of every
  file a merge could not combine, the rule applied and the side kept.

Modules: ``git`` (the git CLI, pinned to one repository), ``repo`` (the
bundle's own repository, the project around it, remotes), ``setup`` (``sync
init``), ``clone`` (``sync clone``), ``jsonl`` (canonical union of logs),
``conflicts`` (finishing a merge per file kind), ``locks`` (writer locks),
``summary`` (what a commit carries), ``run`` (the sync; its verbs are
``b.sync`` in ``ouro/api/sync.py``),
``orientation`` (open conflicts in the packet). ``state`` imports nothing
heavier than orjson, so the sentinel and orientation read it cheaply.
"""
