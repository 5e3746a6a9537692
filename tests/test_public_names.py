"""One public class per name: no two public modules of the package define
a public class or type alias of the same name (two ``Token`` classes with
different fields, a ``Span`` alias beside a ``Span`` class), so that a
name in the documentation or an error message means one thing.

Every public ``fasttag/**/*.py`` (no path part private, ``_core`` and
``linear/_base.py`` left out) is parsed with :mod:`ast`; what it defines at
module level counts: ``class`` statements, type aliases (``X = Tuple[...]``,
``X: TypeAlias = ...``, ``type X = ...``, ``NamedTuple``/``TypeVar``/
``NewType`` calls) and a class bound to a second name (``Token =
SurfaceToken``).  Names imported from elsewhere are the same object, not a
second definition.  An old name kept for compatibility is served by the
module's ``__getattr__`` with a DeprecationWarning, so it defines nothing
here; the deprecated names are checked to warn and to be the new ones.
"""
import ast
import importlib
import typing
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

import fasttag

PACKAGE = Path(fasttag.__file__).resolve().parent

#: Old name (module, name) -> the new object's (module, name), each kept with a DeprecationWarning.
DEPRECATED = {
    ("fasttag.tasks.tok", "Token"): ("fasttag.text.goldtext", "SurfaceToken"),
    ("fasttag.text.schemes", "Span"): ("fasttag.text.schemes", "LabelledSpan"),
}

_ALIAS_CALLS = {"NamedTuple", "namedtuple", "TypedDict", "TypeVar", "NewType", "ParamSpec", "TypeVarTuple",
                "TypeAliasType"}
_GENERICS = set(typing.__all__) | {"tuple", "list", "dict", "set", "frozenset", "type"}


def _public(name):
    return not name.startswith("_")


def _is_class_name(name):
    return name[:1].isupper() and not name.isupper()


def _last_name(node):
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _is_alias(value):
    """Whether an assigned value makes a type alias or a new type."""
    if isinstance(value, ast.Subscript):
        return _last_name(value.value) in _GENERICS
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):       # int | None
        return _is_alias(value.left) or _is_alias(value.right)
    if isinstance(value, ast.Call):
        return _last_name(value.func) in _ALIAS_CALLS
    return False


def defined_types(source, filename="<source>"):
    """(name, line) of each public class or type alias ``source`` defines
    at module level (inside ``if``/``try``/``with`` blocks too)."""
    out = []

    def walk(body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out.append((node.name, node.lineno))
            elif isinstance(node, (ast.If, ast.Try, ast.With)) or type(node).__name__ == "TryStar":
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, None) or [])
                for handler in getattr(node, "handlers", ()):
                    walk(handler.body)
            elif isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
                rebound = _last_name(node.value)         # Token = SurfaceToken: a class under a second name
                if _is_alias(node.value) or (rebound is not None and _is_class_name(rebound)):
                    out.extend((t, node.lineno) for t in targets if _is_class_name(t))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if _last_name(node.annotation) == "TypeAlias" or (node.value is not None and _is_alias(node.value)):
                    out.append((node.target.id, node.lineno))
            elif type(node).__name__ == "TypeAlias":                 # type X = ... (Python 3.12)
                out.append((node.name.id, node.lineno))
    walk(ast.parse(source, filename).body)
    return [(name, line) for name, line in out if _public(name)]


def public_modules(root=PACKAGE):
    """{dotted name: path} of the public Python modules under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        parts = rel.with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def shared_names(modules):
    """{name: ["module:line", ...]} of the public types defined more than once."""
    where = defaultdict(list)
    for module, path in sorted(modules.items()):
        for name, line in defined_types(path.read_text(encoding="utf-8"), str(path)):
            where[name].append(f"{module}:{line}")
    return {name: places for name, places in where.items() if len(places) > 1}


def test_no_two_public_types_share_a_name():
    modules = public_modules()
    assert "fasttag.tasks.tok" in modules and "fasttag.text.rawtext" in modules
    assert not any(m.startswith("fasttag._core") for m in modules)
    shared = shared_names(modules)
    assert not shared, "public classes or aliases of one name in several modules:\n  " + "\n  ".join(
        f"{name}: {', '.join(places)}" for name, places in sorted(shared.items()))


def test_the_scan_sees_a_second_token(tmp_path):
    """The check fails on what it is for: a second public ``Token``, an
    alias named like a class, a class rebound to another's name."""
    pkg = tmp_path / "pkg"
    (pkg / "_private").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import NamedTuple, Tuple\n"
                              "class Token(NamedTuple):\n    start: int\n"
                              "Span = Tuple[str, int, int]\n"
                              "Word = NamedTuple('Word', [('form', str)])\n"
                              "MAX = LIMITS[0]\n"
                              "class _Hidden:\n    pass\n")
    (pkg / "b.py").write_text("import typing\nfrom .a import Token as Imported\n"
                              "if True:\n    class Token:\n        pass\n"
                              "class Span:\n    pass\n"
                              "class Word:\n    pass\n"
                              "Alias = Token\n"
                              "class Hidden:\n    pass\n")
    (pkg / "c.py").write_text("import typing\nfrom .a import Token as SurfaceToken\n"
                              "OptionalWord: typing.TypeAlias = 'Word | None'\n"
                              "Hidden = typing.Optional[int]\nMAX = 3\nDefault = None\nTokens = SurfaceToken\n")
    (pkg / "_private" / "d.py").write_text("class Token:\n    pass\n")
    modules = public_modules(pkg)
    assert set(modules) == {"pkg", "pkg.a", "pkg.b", "pkg.c"}
    assert shared_names(modules) == {"Token": ["pkg.a:2", "pkg.b:4"], "Span": ["pkg.a:4", "pkg.b:6"],
                                     "Word": ["pkg.a:5", "pkg.b:8"], "Hidden": ["pkg.b:11", "pkg.c:4"]}
    assert defined_types((pkg / "c.py").read_text()) == [("OptionalWord", 3), ("Hidden", 4), ("Tokens", 7)]
    assert ("Alias", 10) in defined_types((pkg / "b.py").read_text())


@pytest.mark.parametrize("old,new", sorted(DEPRECATED.items()))
def test_old_names_still_work_with_a_warning(old, new):
    module = importlib.import_module(old[0])
    with pytest.warns(DeprecationWarning, match=rf"{old[0]}\.{old[1]} is deprecated: use {new[0]}\.{new[1]}"):
        value = getattr(module, old[1])
    assert value is getattr(importlib.import_module(new[0]), new[1])
    assert old[1] not in vars(module)          # served by __getattr__: no second definition
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(importlib.import_module(new[0]), new[1])      # the new name does not warn
    with pytest.raises(AttributeError):
        getattr(module, old[1] + "_nothing")


def test_a_tokenizers_spans_are_its_sentence_tokens():
    tok = fasttag.load("en-tok")
    text = "I don't like it. Do you?"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = tok.sentence_tokens(text)
    assert [[t.form for t in s] for s in found] == [["I", "don't", "like", "it", "."], ["Do", "you", "?"]]
    assert all(type(t).__name__ == "SurfaceToken" for s in found for t in s)
    with pytest.warns(DeprecationWarning, match=r"Tokenizer\.spans\(\) is deprecated: use "
                                                r"Tokenizer\.sentence_tokens\(\)"):
        assert tok.spans(text) == found
