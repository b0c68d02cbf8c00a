"""One bundle's workbench: parse a page request, call the page's reads, render.

Used by both the server and the static build, so both show the same pages.
Query parameters are validated here (numbers, kinds, lengths) and locators
through ``ouro.store.locator.Locator``; anything else is refused with
``InvalidInput`` / ``InvalidLocator`` (the server answers 400).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, NotFound
from ouro.proof.redact import bundle_literals
from ouro.store import jsonio
from ouro.store.bounded import open_regular
from ouro.store.locator import Locator
from ouro.workbench.pages import PAGES, Query
from ouro.workbench.render import Site, environment, render_page

MAX_PAGE = 1_000_000
MAX_TEXT = 200
LOCATOR_LIMIT = 200_000
#: what the pages import on first use (see ``Workbench.warm``)
WARM_MODULES = (
    "ouro.arc.resume",
    "ouro.arc.timeline",
    "ouro.arc.claims",
    "ouro.desk.orientation",
    "ouro.desk.record_view",
    "ouro.desk.notes",
    "ouro.desk.tasks",
    "ouro.sentinel.status",
    "ouro.sentinel.history",
    "ouro.api.habits",
    "ouro.index.search",
)


def _one(params: Mapping[str, Sequence[str]], key: str) -> str | None:
    values = params.get(key) or []
    value = values[-1].strip() if values else ""
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"{key}: longer than {MAX_TEXT} characters")
    return value or None


def _page(text: str | None, key: str) -> int:
    if text is None:
        return 1
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise InvalidInput(f"{key}: must be a page number, got {text!r}")
    return int(text)


def _sub_pages(name: str) -> tuple[str, ...]:
    """The query keys that page a page's secondary lists."""
    if name == "desk":
        from ouro.desk.tasks import STATUSES

        return (*(f"col_{s}" for s in STATUSES), "friction", "tips")
    if name == "record":
        return ("notes", "entities")
    return ()


def parse_query(name: str, params: Mapping[str, Sequence[str]]) -> Query:
    from ouro.arc.events import EVENT_KINDS

    query = Query(page=_page(_one(params, "page"), "page"))
    if name == "timeline":
        query.kind = _one(params, "kind")
        if query.kind is not None and query.kind not in EVENT_KINDS:
            raise InvalidInput(f"kind: unknown event kind {query.kind!r}")
        query.session = _one(params, "session")
    elif name == "record":
        query.entity = _one(params, "entity")
    elif name == "search":
        from ouro.index.search import KINDS

        query.q = _one(params, "q")
        query.kinds = [k for k in params.get("kind", []) if k]
        unknown = [k for k in query.kinds if k not in KINDS]
        if unknown:
            raise InvalidInput(f"kind: unknown kind {unknown[0]!r}")
    for key in _sub_pages(name):
        value = _one(params, key)
        if value is not None:
            query.sub_pages[key] = _page(value, key)
    return query


class Workbench:
    """Renders the pages of one bundle, served (live links) or static."""

    def __init__(self, bundle: Bundle, *, served: bool) -> None:
        self.bundle = bundle
        self.served = served

    def warm(self) -> None:
        """Import the readers and compile the templates now, so that the first
        request does not pay for them (the server calls this before serving)."""
        import importlib

        from ouro.workbench.render import markdown_engine

        for module in WARM_MODULES:
            importlib.import_module(module)
        markdown_engine()
        env, _site = self._env_site()
        for name in (*PAGES, "locator"):
            env.get_template(f"{name}.html")

    def _env_site(self) -> tuple[Any, Site]:
        # Literals are read per render: bundle.json may gain one while serving.
        site = Site(served=self.served, literals=tuple(bundle_literals(self.bundle)))
        return environment(site), site

    def _agent(self) -> str | None:
        from ouro.orient import agent_name

        return agent_name(self.bundle)

    def render(self, name: str, query: Query | None = None) -> str:
        return self.render_with_context(name, query)[0]

    def render_with_context(
        self, name: str, query: Query | None = None
    ) -> tuple[str, dict[str, Any]]:
        """The page's HTML and the context it was rendered from."""
        if name not in PAGES:
            raise NotFound(f"no page {name!r}", hint="pages: " + ", ".join(PAGES))
        title, build = PAGES[name]
        query = query or Query()
        env, _site = self._env_site()
        context = build(self.bundle, query)
        context["query"] = query
        return render_page(env, name, context, title=title, agent=self._agent()), context

    def render_locator(self, text: str) -> str:
        """One file (or one JSONL record) of the bundle, redacted and escaped."""
        locator = Locator.parse(text)
        path = locator.resolve(self.bundle.root)
        context: dict[str, Any] = {"locator": str(locator), "markdown": None, "text": None,
                                   "front": None, "error": None, "truncated": None}  # fmt: skip
        if not path.is_file():
            context["error"] = f"{locator.path} is not a file in the bundle"
        else:
            with open(open_regular(path), "rb") as handle:  # never more than shown
                data = handle.read(LOCATOR_LIMIT)
            if len(data) == LOCATOR_LIMIT:
                context["truncated"] = LOCATOR_LIMIT
            body = data.decode("utf-8", errors="replace")
            literals = bundle_literals(self.bundle)
            if locator.fragment is not None:
                context["text"] = _record(body, locator.fragment, literals) or None
                if context["text"] is None:
                    context["error"] = f"no record {locator.fragment} in {locator.path}"
            elif path.suffix == ".md":
                front, _, rest = _split_front(body)
                context["front"], context["markdown"] = front, rest
            elif path.suffix in (".json", ".jsonl"):
                # Values are redacted one by one (as parsed JSON) before the page's own pass.
                context["text"] = "\n".join(
                    _pretty(part, literals) for part in _parts(body, path.suffix)
                )
            else:
                context["text"] = body
        env, _site = self._env_site()
        return render_page(env, "locator", context, title="Locator", agent=self._agent())


def _parts(body: str, suffix: str) -> list[str]:
    return [body] if suffix == ".json" else [line for line in body.splitlines() if line.strip()]


def _pretty(body: str, literals: Sequence[str]) -> str:
    import orjson

    from ouro.proof.redact import redact_obj

    try:
        value = jsonio.loads(body)
    except jsonio.JSONDecodeError:
        return body
    return orjson.dumps(redact_obj(value, literals), option=orjson.OPT_INDENT_2).decode()


def _record(body: str, record_id: str, literals: Sequence[str]) -> str:

    for line in body.splitlines():
        if record_id not in line:
            continue
        try:
            value = jsonio.loads(line)
        except jsonio.JSONDecodeError:
            continue
        if isinstance(value, dict) and value.get("id") == record_id:
            return _pretty(line, literals)
    return ""


def _split_front(body: str) -> tuple[str | None, str, str]:
    from ouro.store import frontmatter

    try:
        block, rest = frontmatter.split(body)
    except CorruptFile:  # shown as it is
        return None, "", body
    if block is None:
        return None, "", body
    return block.rstrip("\n"), "", rest.lstrip("\n")
