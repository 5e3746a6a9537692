"""The package's structure, read from its sources: the layers it is
described by are the ones its imports keep, and the Python API speaks in
Python's terms.

Every ``fasttag/**/*.py`` is parsed with :mod:`ast`; every import counts,
at module level or inside a function, relative or absolute.  The layers,
bottom to top: errors, display, parallel, files < ``_core`` (compiled) <
``text`` < ``features`` < ``model`` < ``tasks`` < ``pipeline`` < ``linear``
< the top level (store, the ``cli`` package and its modules, the
integrations, ``__init__``, ``__main__``).  A module may import its own
layer and the layers below it, never one above;
the imports form no cycle; no private name (``_x``, not a dunder) is
imported from another module, and a private module (``linear/_base``)
only from inside its own package.  Each test lists every violation.
"""
import ast
import re
from pathlib import Path

import fasttag

PACKAGE = Path(fasttag.__file__).resolve().parent

BOTTOM = ("fasttag.errors", "fasttag.display", "fasttag.parallel", "fasttag.files")
LAYERS = ("fasttag._core", "fasttag.text", "fasttag.features", "fasttag.model", "fasttag.tasks", "fasttag.pipeline",
          "fasttag.linear")
#: A module kept under its old name, which only forwards (with a DeprecationWarning) to its new home:
#: the one import it may make of a higher layer, outside the cycle and layer checks.
MOVED = {"fasttag.tasks.ud": "fasttag.pipeline"}
TOP = len(LAYERS) + 1


def _modules():
    """{dotted name: path} of the package's Python modules, and the set of
    its compiled modules (their sources or built files)."""
    python, compiled = {}, set()
    for path in PACKAGE.rglob("*"):
        rel = path.relative_to(PACKAGE.parent)
        if path.suffix == ".py":
            name = ".".join(rel.with_suffix("").parts)
            python[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
        elif path.suffix in (".pyx", ".so", ".pyd"):
            compiled.add(".".join(rel.parent.parts + (path.name.split(".")[0],)))
    return python, compiled


PYTHON, COMPILED = _modules()
MODULES = set(PYTHON) | COMPILED


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports():
    """(importer, imported module, private name or None, line) for every
    import of a fasttag module in the package."""
    out = []
    for name, path in sorted(PYTHON.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                out += [(name, a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "fasttag"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.split(".")[0] != "fasttag":
                    continue
                for a in node.names:
                    if f"{base}.{a.name}" in MODULES:          # a module, not a name
                        out.append((name, f"{base}.{a.name}", None, node.lineno))
                    else:
                        out.append((name, base, a.name if _is_private(a.name) else None, node.lineno))
    return out


IMPORTS = [i for i in _imports() if MOVED.get(i[0]) != i[1]]


def _where(importer, line):
    return f"{PYTHON[importer].relative_to(PACKAGE.parent).as_posix()}:{line}"


def _layer(module):
    if module in BOTTOM:
        return 0
    for i, package in enumerate(LAYERS, start=1):
        if module == package or module.startswith(package + "."):
            return i
    return TOP


def _layer_name(i):
    return "bottom" if i == 0 else "top level" if i == TOP else LAYERS[i - 1]


def _cycles():
    """One cycle (a list of modules, first repeated last) through each
    strongly connected group of two or more modules."""
    edges = {}
    for importer, module, _, _ in IMPORTS:
        if module in PYTHON and module != importer:
            edges.setdefault(importer, set()).add(module)
    index, low, stack, on, groups = {}, {}, [], set(), []

    def visit(v):                      # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)
    for v in sorted(PYTHON):
        if v not in index:
            visit(v)
    cycles = []
    for group in groups:               # a shortest way back to the group's first module
        start = min(group)
        paths = {start: [start]}
        frontier = [start]
        while frontier and start not in {w for v in frontier for w in edges.get(v, ())}:
            nxt = []
            for v in frontier:
                for w in sorted(edges.get(v, ()) & group):
                    if w not in paths:
                        paths[w] = paths[v] + [w]
                        nxt.append(w)
            frontier = nxt
        last = next(v for v in frontier if start in edges.get(v, ()))
        cycles.append(paths[last] + [start])
    return sorted(cycles)


def test_no_import_cycle():
    assert PYTHON and "fasttag.tasks.base" in PYTHON and "fasttag._core.weights" in MODULES
    found = [" -> ".join(c) for c in _cycles()]
    assert not found, "import cycles:\n  " + "\n  ".join(found)


def test_no_private_name_crosses_modules():
    """``from .x import _y`` couples a module to another's internals: a
    name another module needs is public.  A private module may be used
    from inside its own package only (``linear/_base`` by the estimators);
    the compiled modules are modules, not names."""
    bad = []
    for importer, module, name, line in IMPORTS:
        if name is not None and module != importer:
            bad.append(f"{_where(importer, line)}: {importer} imports {name} from {module}")
        parent, _, last = module.rpartition(".")
        if _is_private(last) and importer != parent and not importer.startswith(parent + "."):
            bad.append(f"{_where(importer, line)}: {importer} imports the private module {module}")
    assert not bad, "private names imported across modules:\n  " + "\n  ".join(sorted(set(bad)))


def _module_aliases(name, path):
    """{local name: fasttag module} of the modules ``name`` imports as modules."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    aliases = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                if f"{base}.{a.name}" in MODULES:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "fasttag" and a.asname:
                    aliases[a.asname] = a.name
    return aliases


def test_no_private_name_of_another_module_is_used():
    """``from . import x`` then ``x._y(...)``: the same coupling as
    importing ``_y`` (the compiled modules' private names included)."""
    bad = []
    for name, path in sorted(PYTHON.items()):
        aliases = _module_aliases(name, path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _is_private(node.attr) \
                    and node.value.id in aliases and aliases[node.value.id] != name:
                module = aliases[node.value.id]
                parent = module.rpartition(".")[0]
                if not (_is_private(module.rpartition(".")[2]) and name.startswith(parent + ".")):
                    bad.append(f"{_where(name, node.lineno)}: {name} uses {module}.{node.attr}")
    assert not bad, "private names of other modules used:\n  " + "\n  ".join(sorted(set(bad)))


def test_no_upward_import():
    """A lower layer never imports a higher one (see the module docstring)."""
    assert _layer("fasttag.tasks.base") > _layer("fasttag.model.sequence") > _layer("fasttag._core.weights") \
        > _layer("fasttag.errors")
    assert _layer("fasttag.store") == _layer("fasttag.cli") == _layer("fasttag.cli.dispatch") == TOP
    bad = sorted({f"{_where(importer, line)}: {importer} ({_layer_name(_layer(importer))}) imports {module} "
                  f"({_layer_name(_layer(module))})"
                  for importer, module, _, line in IMPORTS if _layer(module) > _layer(importer)})
    assert not bad, "upward imports:\n  " + "\n  ".join(bad)


def _methods_and_calls():
    """Per module: the private methods its classes define, the names its
    ``Protocol`` classes declare, and each ``x._name`` it uses on an object
    other than its own class's ``self``/``cls``: (name, line)."""
    out = {}
    for name, path in PYTHON.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        defined, declared, used = set(), set(), []
        own = set()                 # the self/cls names of methods: their own class's
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                protocol = any((b.id if isinstance(b, ast.Name) else getattr(b, "attr", None)) == "Protocol"
                               for b in node.bases)
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        (declared if protocol else defined).add(item.name)
                        if item.args.args:
                            own.add(id(item))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = node.args.args[0].arg if id(node) in own and node.args.args else None
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Attribute) and _is_private(inner.attr) \
                            and not (isinstance(inner.value, ast.Name) and inner.value.id == first):
                        used.append((inner.attr, inner.lineno))
        out[name] = (defined, declared, used)
    return out


def test_a_lower_layer_calls_only_declared_methods_of_a_higher_one():
    """The model layer trains and inspects task models of the layer above
    it: each private method it calls on them is declared in a protocol of
    its own layer or below (``fasttag.model.taskmodel``), never just known
    by name."""
    table = _methods_and_calls()
    by_layer = {}
    for module, (defined, declared, _) in table.items():
        by_layer.setdefault(_layer(module), [set(), set()])
        by_layer[_layer(module)][0] |= defined
        by_layer[_layer(module)][1] |= declared
    bad = []
    for module, (_, _, used) in sorted(table.items()):
        level = _layer(module)
        below = set().union(*(d for lv, (d, _) in by_layer.items() if lv <= level))
        declared = set().union(*(p for lv, (_, p) in by_layer.items() if lv <= level))
        above = set().union(*(d for lv, (d, _) in by_layer.items() if lv > level))
        for attr, line in used:
            if attr in above and attr not in below | declared:
                bad.append(f"{_where(module, line)}: {module} ({_layer_name(level)}) calls {attr}, a method of a "
                           f"higher layer that no protocol of its layer declares")
    assert "_fold_tables" in by_layer[_layer("fasttag.model.taskmodel")][1]
    assert not bad, "undeclared calls up the layers:\n  " + "\n  ".join(sorted(set(bad)))


# ---------------------------------------------------------------- errors in the caller's terms

_FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _flag_texts(path):
    """(line, text) of each string literal of ``path`` that names a
    command-line flag, docstrings left out: a message raised or warned
    directly, built by a helper or handed down as a hint."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and _FLAG.search(node.value))


def test_the_python_api_names_no_command_line_flag():
    """Errors and warnings raised to Python callers name Python arguments
    (``option NAME``, ``option NAME='value'``); the command line turns
    those into its flags (:func:`fasttag.model.options.cli_text`).  Only
    the modules of ``cli/`` (not of a folder inside it) know the flags."""
    assert (PACKAGE / "cli" / "dispatch.py").is_file()
    bad = [f"{path.relative_to(PACKAGE.parent).as_posix()}:{line}: {text!r}"
           for path in sorted(PACKAGE.rglob("*.py")) if path.parent != PACKAGE / "cli"
           for line, text in _flag_texts(path)]
    assert not bad, "messages of the Python API that name command-line flags:\n  " + "\n  ".join(bad)


def test_the_flag_scan_sees_fstrings_and_raises(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Docstrings may say --json."""\n'
                      'def f(k):\n'
                      '    """Nor here: --nbest."""\n'
                      '    raise ValueError(f"{k} needs --json")\n'
                      'def g():\n'
                      '    import warnings\n'
                      '    warnings.warn("option k, not --k-best or -- alone")\n', encoding="utf-8")
    assert [line for line, _ in _flag_texts(sample)] == [4, 7]
