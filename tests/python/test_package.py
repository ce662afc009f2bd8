"""The package's structure: real modules with explicit __all__, no import cycle (not even
a deferred one inside a function), fixq.torch imported without importing itself back,
the one version number, and old spellings as DeprecationWarning."""

import ast
import pathlib
import re
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import fixq

PACKAGE = pathlib.Path(fixq.__file__).resolve().parent
ROOT = pathlib.Path(__file__).resolve().parents[2]


def package_imports():
    """module -> the fixq modules it imports anywhere in its source (functions included)."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        name = ".".join(["fixq", *parts])
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = pkg
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = (base + ("." + node.module if node.module else "")) if node.level else node.module
                if target and target.startswith("fixq"):
                    deps.add(target)
                    for alias in node.names:
                        if (PACKAGE / target.replace("fixq", "", 1).strip(".").replace(".", "/") / (alias.name + ".py")).exists():
                            deps.add(f"{target}.{alias.name}")
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("fixq"))
        graph[name] = {d for d in deps if d != name}
    return graph


def test_no_module_imports_one_that_imports_it_back():
    graph = package_imports()
    assert "fixq._fakequant" in graph and "fixq.torch" in graph, sorted(graph)
    assert "fixq.torch" not in graph["fixq._fakequant"], graph["fixq._fakequant"]

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for d in graph.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    # A package imports its parent packages by definition; anything else reaching back is a cycle.
    cycles = [m for m in graph if m in reach(m) and not any(m.startswith(d + ".") for d in graph[m])]
    assert not cycles, {m: sorted(graph[m]) for m in cycles}


def test_import_time_shows_no_reimport_of_fixq_torch():
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import fixq.torch"], capture_output=True, text=True,
                       check=True)
    names = [line.split("|")[-1] for line in r.stderr.splitlines() if line.startswith("import time:")]
    # Each module is listed once, indented under the module that imported it.
    fake = [i for i, n in enumerate(names) if n.strip() == "fixq._fakequant"]
    assert len(fake) == 1, names
    depth = len(names[fake[0]]) - len(names[fake[0]].lstrip())
    # The modules fixq._fakequant imported are the indented lines right above it.
    inner = []
    for n in reversed(names[:fake[0]]):
        if len(n) - len(n.lstrip()) <= depth:
            break
        inner.append(n.strip())
    assert "fixq.torch" not in inner and "fixq._quantgru" in inner, inner


@pytest.mark.parametrize("module", [fixq, fixq.formats, fixq.metrics])
def test_modules_are_files_with_an_explicit_all(module):
    assert isinstance(module, types.ModuleType)
    assert pathlib.Path(module.__file__).suffix == ".py", module.__file__
    source = pathlib.Path(module.__file__).read_text()
    assert re.search(r"^__all__ = \[", source, re.M), f"{module.__name__}.__all__ is not a written-out list"
    public = {n for n in dir(module) if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType)}
    public |= {n for n in ("formats", "metrics") if module is fixq}
    assert set(module.__all__) == public, set(module.__all__) ^ public
    assert len(module.__all__) == len(set(module.__all__))


def test_fixq_torch_exports_both_modules():
    import fixq.torch as ft

    assert ft.__all__ == ["QuantGRU", "FakeQuantGRU", "FixqModel", "FixqModelStream", "export_model", "quantize_module"]
    assert ft.QuantGRU.__module__ == "fixq._quantgru" and ft.FakeQuantGRU.__module__ == "fixq._fakequant"
    assert ft.FixqModel.__module__ == "fixq._model_torch"


def test_version_is_the_projects():
    want = re.search(r"project\(fixq VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert fixq.__version__ == want


def test_old_spellings_warn_and_still_work():
    with pytest.warns(DeprecationWarning, match="granularity 'per-channel' is deprecated; write 'per_channel'"):
        old = fixq.QuantScheme(bits=8, granularity="per-channel", axis=0)
    with pytest.warns(DeprecationWarning, match="granularity 'channel' is deprecated"):
        fixq.QuantScheme(bits=8, granularity="channel", axis=0)
    with pytest.warns(DeprecationWarning, match="scale 'float' is deprecated; write 'multiplier'"):
        fixq.QuantScheme(scale="float")
    assert old.granularity == "per_channel"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fixq.QuantScheme(granularity="per_channel").granularity == "per_channel"  # no warning
        with pytest.raises(DeprecationWarning):
            fixq.QuantScheme(granularity="tensor")
    with pytest.raises(ValueError, match="granularity must be per_tensor, per_channel, per_group or per_token, got 'diagonal'"):
        fixq.QuantScheme(granularity="diagonal")


def test_file_kind_tells_files_apart_by_their_bytes(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3, np.float32))
    (tmp_path / "gguf.bin").write_bytes(b"GGUF" + bytes(20))  # the name does not count
    fixq.formats.save_encoded(tmp_path / "w.dat", fixq.formats.encode("e4m3fn", np.ones(4)))
    (tmp_path / "text.onnx").write_bytes(b"not a model")
    (tmp_path / "other").write_bytes(b"\x01\x02")
    assert [fixq.file_kind(tmp_path / n) for n in ("a.npy", "gguf.bin", "w.dat", "text.onnx", "other")] == [
        "npy", "gguf", "encoded-tensor", "onnx", "unknown"]
    with pytest.raises(FileNotFoundError):
        fixq.file_kind(tmp_path / "missing")


def test_file_kind_tells_a_quantized_model(tmp_path):
    import torch
    from torch import nn
    f = tmp_path / "lin.onnx"
    torch.onnx.export(nn.Sequential(nn.Linear(4, 3), nn.Tanh()), (torch.randn(2, 5, 4),), str(f), opset_version=13,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "B", 1: "T"}, "y": {0: "B", 1: "T"}})
    q = fixq.QuantizedModel.quantize(fixq.Model.load_onnx(f), [np.ones((1, 3, 4), np.float32)])
    q.save(tmp_path / "m.fixq")
    assert fixq.file_kind(tmp_path / "m.fixq") == "model-quantized"
