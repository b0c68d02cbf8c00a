"""The workbench: a read-only web view of a bundle, served or built as static files.

A projection over the bundle's files, never their source of truth: every page
is rendered from the domains' own read functions (``pages``), through Jinja2
templates shipped in this package (``templates/``, ``static/``), with every
value redacted and HTML-escaped (``render``). ``server`` serves the pages on
127.0.0.1 with live updates; ``site`` writes them as a static site.

File contract: the workbench writes nothing into the bundle (no file, no
mtime, not even ``state/index/``: search opens the index immutable). It does
not refresh the sentinel or sync the index; it shows what is there and says
when that is stale or unknown.

Jinja2 and markdown-it-py are imported only when a page is rendered.
"""
