"""Rendering pages: Jinja2 templates shipped in this package, safe by construction.

- Every value a template prints passes ``finalize``: it is redacted
  (``ouro.proof.redact.redact`` with the bundle's literals) and then
  HTML-escaped by autoescaping. Templates never use ``|safe``; the only
  ``Markup`` they receive is built here from values that were redacted first
  (Markdown, search highlights).
- Markdown is rendered by markdown-it-py with raw HTML disabled; its link
  validation refuses ``javascript:``/``vbscript:``/``file:``/``data:`` links.
- Styles are inline in one ``<style>`` element whose hash is in the
  Content-Security-Policy; the only script is the served ``/static/live.js``
  (``script-src 'self'``); the static site ships none (``script-src 'none'``).

``Site`` says how links are written: served (``/timeline?page=2``, locator
views at ``/locator?l=…``) or static (``timeline-2.html``, locators as text).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from ouro.proof.redact import redact

if TYPE_CHECKING:
    import jinja2
    from markdown_it import MarkdownIt
    from markupsafe import Markup

#: pages of each paged list that a static build writes
STATIC_PAGES = 20
NAV = ("now", "timeline", "claims", "recovery", "desk", "record", "habits", "search")


@cache
def stylesheet() -> str:
    return resources.files("ouro.workbench").joinpath("static/style.css").read_text("utf-8")


def style_hash() -> str:
    digest = hashlib.sha256(stylesheet().encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def csp(*, served: bool) -> str:
    script = "'self'" if served else "'none'"
    parts = [
        "default-src 'none'",
        f"script-src {script}",
        f"style-src '{style_hash()}'",
        "img-src 'self' data:" if served else "img-src data:",
        "connect-src 'self'" if served else "connect-src 'none'",
        "base-uri 'none'",
        "form-action 'self'" if served else "form-action 'none'",
    ]
    if served:
        parts.append("frame-ancestors 'none'")  # ignored in a <meta>, so only when served
    return "; ".join(parts)


@dataclass(frozen=True)
class Site:
    served: bool
    literals: tuple[str, ...] = ()

    def clean(self, text: str) -> str:
        return redact(text, self.literals)

    # URLs are built from values redacted one by one, then escaped, and handed to
    # the templates as Markup: a second redaction pass over a whole URL would
    # mistake our own query keys (``?session=``) for credentials.
    def page_url(self, name: str, page: int = 1, **params: Any) -> Markup:
        from markupsafe import escape

        args = {k: self.clean(str(v)) for k, v in params.items() if v not in (None, "", [])}
        if self.served:
            path = "/" if name == "now" else f"/{name}"
            if page > 1:
                args["page"] = str(page)
            return escape(path + (f"?{urlencode(args)}" if args else ""))
        if page > STATIC_PAGES:
            return escape("")  # not in the static site: the pager shows the link as off
        base = "index" if name == "now" else name
        return escape(f"{base}.html" if page <= 1 else f"{base}-{page}.html")

    def locator_url(self, locator: str | None) -> Markup | None:
        from markupsafe import escape

        if not self.served or not locator:
            return None
        return escape("/locator?l=" + quote(self.clean(locator), safe="/-_.~"))


@cache
def markdown_engine() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


@cache
def environment(site: Site) -> jinja2.Environment:
    """One environment per site (compiled templates are reused; ``Site`` is hashable)."""
    import jinja2
    from markupsafe import Markup, escape

    def finalize(value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, Markup):
            return value  # built below from redacted text only
        if isinstance(value, bool | int | float):
            return value
        return site.clean(str(value))

    def markdown(text: str | None) -> Markup:
        if not text:
            return Markup("")
        md = markdown_engine()
        tokens = md.parse(site.clean(text))
        for token in tokens:  # the page owns h1 and h2: a note's headings start at h3
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
        return Markup(md.renderer.render(tokens, md.options, {}))

    def highlight(snippet: str | None) -> Markup:
        """Search snippets mark hits with ``**``; each part is redacted and escaped."""
        parts = site.clean(snippet or "").split("**")
        out = [
            f"<mark>{escape(p)}</mark>" if i % 2 else str(escape(p)) for i, p in enumerate(parts)
        ]
        return Markup("".join(out))

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ouro.workbench", "templates"),
        autoescape=True,
        finalize=finalize,
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = markdown
    env.filters["highlight"] = highlight
    env.filters["short"] = lambda t, n=16: str(t)[:n] if t else ""
    env.filters["when"] = _when
    env.globals.update(
        site=site,
        nav=NAV,
        page_url=site.page_url,
        locator_url=site.locator_url,
        stylesheet=Markup(stylesheet()),
    )
    return env


_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2})?)")


def _when(value: Any) -> str:
    """``2026-11-30T11:41:57.636Z`` → ``2026-11-30 11:41:57`` (UTC); others as they are."""
    text = str(value or "")
    match = _TIME.match(text)
    return f"{match.group(1)} {match.group(2)}" if match else text


def render_page(
    env: jinja2.Environment, name: str, context: dict[str, Any], *, title: str, agent: str | None
) -> str:
    template = env.get_template(f"{name}.html")
    site = env.globals["site"]
    assert isinstance(site, Site)
    return template.render(
        page=name, title=title, agent=agent, csp=csp(served=site.served), **context
    )
