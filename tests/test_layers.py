"""The layering is checked, not hoped for.

Every ``ouro`` module is read as source (an AST walk, nothing is imported) and
each ``import`` / ``from … import`` it makes is an edge -- at module level and
inside functions alike; only imports under ``if TYPE_CHECKING:`` are left out,
because they never run. Edges are grouped by top-level unit (``ouro.arc``,
``ouro.bundle``, …). Three rules:

1. no import cycle among the units;
2. a domain package never imports a front end;
3. a unit imports only from its own layer or the layers below it (``LAYERS``).

``KNOWN`` lists today's violations, each as (importing module, imported module)
with the reason it is still there. The test fails on any violation not listed
and on any entry that no longer happens, so the list only ever shrinks.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ouro"

#: bottom-up; a unit may import units of its own layer (acyclically) or below
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "notices", "resources", "edge", "tuples"),
    ("store",),
    ("models", "spec", "registry", "guide", "orient_types", "embedding"),
    ("bundle", "config", "progress", "lane"),
    # what ouro observes for itself (checks, refs, redaction): below every domain
    ("proof",),
    # the domains, lowest first: Arc points into Desk (never the reverse), the
    # talk packages use both, sync and migrate move whole bundles, sentinel
    # reads everything below it
    ("desk",),
    ("arc",),
    ("locks",),
    ("messages",),
    ("habits",),
    ("sync",),
    ("migrate",),
    ("sentinel",),
    ("derived", "index"),
    ("orient", "info", "drills"),
    ("api", "ouro"),
    ("cli", "mcp", "hooks", "workbench", "demo"),
)
DOMAINS = frozenset(
    {"arc", "desk", "sentinel", "habits", "migrate", "messages", "locks", "sync", "index", "store"}
    | {"models"}
)
FRONT_ENDS = frozenset({"cli", "mcp", "hooks", "workbench", "demo"})

#: (importer, imported): violations that are still there, and why. Delete an
#: entry when its edge goes; the test says so when one is stale.
KNOWN: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    base = PACKAGE.parent / name.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> set[str]:
    """Every ``ouro`` module ``path`` imports, anywhere but under TYPE_CHECKING."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def add_from(module: str, names: list[str]) -> None:
        if module != "ouro" and not module.startswith("ouro."):
            return
        for alias in names:
            child = f"{module}.{alias}"
            found.add(child if _is_module(child) else module)

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            visit(child)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ouro."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            add_from(module, [a.name for a in node.names])
        elif (  # importlib.import_module("ouro.x") with a literal name
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("ouro.")
        ):
            found.add(node.args[0].value)
        walk(node)

    walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    found.discard(name)
    return found


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ouro"


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


GRAPH = _graph()
RANK = {unit: n for n, layer in enumerate(LAYERS) for unit in layer}


def _cross_unit_edges() -> set[tuple[str, str]]:
    return {
        (a, b)
        for a, targets in GRAPH.items()
        for b in targets
        if unit_of(a) != unit_of(b) and b != "ouro"  # ``from ouro import x`` names x itself
    }


def test_the_walk_sees_function_level_imports() -> None:
    # the walk must count imports inside functions, or the rules prove nothing
    assert "ouro.derived" in GRAPH["ouro.api.sync"]  # imported inside a function
    assert "ouro.orient" in GRAPH["ouro.drills.crash"]  # ``from ouro import orient``
    assert len(_cross_unit_edges()) > 200


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(m) for m in GRAPH}
    assert units - set(RANK) == set(), "place the new unit in LAYERS"


def test_layers_import_downward_only() -> None:
    upward = {(a, b) for a, b in _cross_unit_edges() if RANK[unit_of(b)] > RANK[unit_of(a)]}
    new = sorted(upward - KNOWN.keys())
    assert new == [], "imports that point up the layers (move the code, or import the other way)"


def test_domains_never_import_front_ends() -> None:
    bad = {
        (a, b) for a, b in _cross_unit_edges() if unit_of(a) in DOMAINS and unit_of(b) in FRONT_ENDS
    }
    assert sorted(bad - KNOWN.keys()) == [], "renderers live with the front ends"


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected unit groups of more than one unit (Tarjan)."""
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        out[unit_of(a)].add(unit_of(b))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(out[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(set(out) | {w for ws in out.values() for w in ws}):
        if v not in index:
            visit(v)
    return groups


def test_no_import_cycle_among_units() -> None:
    edges = _cross_unit_edges() - KNOWN.keys()
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({("ouro.a.x", "ouro.b.y"), ("ouro.b.z", "ouro.a.w")}) == [["a", "b"]]


def test_known_violations_are_still_there() -> None:
    for edge in sorted(KNOWN):
        importer, imported = edge
        assert imported in GRAPH.get(importer, set()), f"fixed: delete {edge} from KNOWN"
        assert RANK[unit_of(imported)] > RANK[unit_of(importer)], f"not a violation: delete {edge}"


# --- where the verbs live -----------------------------------------------------------

#: the naming convention: a verb's one implementation is a method in
#: ``ouro/api/<group>.py`` (one module per top-level CLI group); domain packages
#: hold the files' logic under nouns (``desk/tasks.py``: ``add_task``), never a
#: module of tool functions
VERB_MODULE_NAMES = ("api.py", "tools.py")
VERB_MODULE_PARTS = ("_api.py", "tools_", "_tool.py")
#: verb modules outside ouro/api/ today (core27 moves them into ouro/api/):
#: delete each line as its module goes
KNOWN_VERB_MODULES: frozenset[str] = frozenset()


def _verb_modules() -> set[str]:
    out = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("api/"):
            continue
        name = path.name
        if name in VERB_MODULE_NAMES or any(part in name for part in VERB_MODULE_PARTS):
            out.add(rel)
    return out


def test_verbs_live_in_ouro_api() -> None:
    found = _verb_modules()
    assert sorted(found - KNOWN_VERB_MODULES) == [], "verbs go in ouro/api/<group>.py"
    assert sorted(KNOWN_VERB_MODULES - found) == [], "moved: delete it from KNOWN_VERB_MODULES"
