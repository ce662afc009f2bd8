"""The type stub python/fixq/__init__.pyi describes the package as built: the same public
names, the same class members, the same argument names (read from pybind11's signatures)."""

import ast
import re
import types
from pathlib import Path

import fixq

STUB = Path(fixq.__file__).with_name("__init__.pyi")


def stub_tree():
    return ast.parse(STUB.read_text())


def public(names):
    return {n for n in names if not n.startswith("_")}


def runtime_args(fn):
    """Argument names from pybind11's generated signature line 'name(a: T, b: T = ...) -> R'."""
    first = (fn.__doc__ or "").splitlines()[0]
    m = re.match(r"\w+\((.*)\) ->", first)
    assert m, f"no signature in {fn.__doc__!r}"
    return [a for a in re.findall(r"(?:^|, )(\w+):", m.group(1)) if a != "self"]


def stub_args(node):
    return [a.arg for a in node.args.args if a.arg != "self"] + [a.arg for a in node.args.kwonlyargs]


def is_overload(node):
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)


def test_stub_names_are_the_package_names():
    tree = stub_tree()
    stubbed = public(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    runtime = public(n for n in dir(fixq) if not isinstance(getattr(fixq, n), types.ModuleType))
    assert stubbed == runtime


def test_stub_classes_and_signatures_match():
    checked = 0
    for node in stub_tree().body:
        if isinstance(node, ast.FunctionDef) and node.name in fixq._fixq.__dict__:
            assert stub_args(node) == runtime_args(getattr(fixq, node.name)), node.name
            checked += 1
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(fixq, node.name)
        members = [n for n in node.body if isinstance(n, ast.FunctionDef)]
        assert public(n.name for n in members) == public(dir(cls)), node.name
        for n in members:
            if n.name.startswith("_") or is_overload(n) or any(
                    isinstance(d, ast.Name) and d.id == "property" for d in n.decorator_list):
                continue
            assert stub_args(n) == runtime_args(getattr(cls, n.name)), f"{node.name}.{n.name}"
            checked += 1
        init = next((n for n in members if n.name == "__init__"), None)
        if init is not None:
            assert stub_args(init) == runtime_args(cls.__init__), f"{node.name}.__init__"
    assert checked > 50
