"""The type stubs python/fixq/{__init__,formats,metrics}.pyi describe the package as built:
the same public names, the same class members, the same argument names (read from
pybind11's signatures)."""

import ast
import inspect
import re
import types
from pathlib import Path

import pytest

import fixq

# (module, its stub, how many signatures the check must at least compare)
STUBS = [(fixq, "__init__.pyi", 50), (fixq.formats, "formats.pyi", 20), (fixq.metrics, "metrics.pyi", 5)]
IDS = [stub for _, stub, _ in STUBS]


def stub_tree(stub):
    return ast.parse(Path(fixq.__file__).with_name(stub).read_text())


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


def has_decorator(node, name):
    return any(isinstance(d, ast.Name) and d.id == name for d in node.decorator_list)


def declared_names(body):
    """Functions, classes and annotated attributes (constants such as MX_BLOCK_SIZE: int) of a
    stub module or class body."""
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            yield n.name
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            yield n.target.id


@pytest.mark.parametrize("module,stub,_", STUBS, ids=IDS)
def test_stub_names_are_the_module_names(module, stub, _):
    tree = stub_tree(stub)
    stubbed = public(declared_names(tree.body))
    runtime = public(n for n in dir(module) if not isinstance(getattr(module, n), types.ModuleType))
    assert stubbed == runtime


@pytest.mark.parametrize("module,stub,minimum", STUBS, ids=IDS)
def test_stub_classes_and_signatures_match(module, stub, minimum):
    checked = 0
    for node in stub_tree(stub).body:
        # Functions of the extension (pure-Python ones such as quantize_gru carry no
        # pybind11 signature line); overloads have one signature line per overload.
        if isinstance(node, ast.FunctionDef) and not has_decorator(node, "overload") \
                and inspect.isbuiltin(getattr(module, node.name)):
            assert stub_args(node) == runtime_args(getattr(module, node.name)), node.name
            checked += 1
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name)
        assert public(declared_names(node.body)) == public(dir(cls)), node.name
        for n in node.body:
            if not isinstance(n, ast.FunctionDef) or n.name.startswith("_") or has_decorator(n, "overload") \
                    or has_decorator(n, "property"):
                continue
            assert stub_args(n) == runtime_args(getattr(cls, n.name)), f"{node.name}.{n.name}"
            checked += 1
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is not None and not has_decorator(init, "overload"):
            assert stub_args(init) == runtime_args(cls.__init__), f"{node.name}.__init__"
    assert checked >= minimum
