"""Every test module reads on its own: what tests share lives in conftest.py or a helper module,
never in another test module (which would then run, or be read, for someone else's tests); and
no fixture takes the name of a library function or of a name its tests stand beside (a test
taking ``fuse`` beside ``surgeon.fuse`` reads as the one and calls the other)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import surgeon

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# A plugin spec or entry point naming a module: "tests.plugins.helpers:Name" loads it as an import does.
_SPEC = re.compile(r"\btests(?:\.\w+)+")


def _is_test_module(dotted: str) -> bool:
    return dotted.rsplit(".", 1)[-1].startswith("test_")


def _absolute(path: Path, root: Path, module: str | None, level: int) -> str:
    """The dotted name an import statement in ``path`` names (relative imports resolved)."""
    if not level:
        return module or ""
    package = list(path.relative_to(root).with_suffix("").parts[:-1])
    base = package[:len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imported_test_modules(path: Path, root: Path = ROOT) -> list[str]:
    """Test modules the file at ``path`` imports, anywhere in it (inside functions too), or names
    in a string that will be imported (a ``--plugin`` spec, an entry point)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(path, root, node.module, node.level)
            if _is_test_module(target):
                found.append(target)
            else:  # from . import test_x
                found += [f"{target}.{a.name}" for a in node.names if a.name.startswith("test_")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [m for m in _SPEC.findall(node.value) if _is_test_module(m)]
    return found


def _fixtures(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                func = call.func if call else deco
                if ast.unparse(func).endswith("fixture"):
                    named = [k.value.value for k in (call.keywords if call else []) if k.arg == "name"]
                    names.append(named[0] if named else node.name)
    return names


def _bound_names(tree: ast.Module) -> dict[str, int]:
    """Module-level names and how many statements bind them (imports, defs, classes, assignments)."""
    counts: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [node.name]
        elif isinstance(node, ast.Assign):
            bound = [t.id for t in node.targets if isinstance(t, ast.Name)]
        else:
            bound = []
        for name in bound:
            counts[name] = counts.get(name, 0) + 1
    return counts


def misnamed_fixtures(files: list[Path], root: Path = ROOT) -> list[str]:
    """Fixtures named like surgeon's public API, or like another name bound beside them: in their
    own module, or (for a conftest.py) in a module of the folder it serves."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in files}
    found = []
    for path, tree in trees.items():
        for name in _fixtures(tree):
            if name in surgeon.__all__:
                found.append(f"{path.relative_to(root)}: fixture {name!r} is surgeon.{name}'s name")
            served = [p for p in trees if p.parent.is_relative_to(path.parent)] if path.name == "conftest.py" else [path]
            for other in served:
                bindings = _bound_names(trees[other]).get(name, 0) - (other == path)
                if bindings > 0:
                    found.append(f"{path.relative_to(root)}: fixture {name!r} beside {other.relative_to(root)}'s "
                                 f"own {name!r}")
    return found


def test_no_test_module_imports_another_test_module():
    offenders = {str(p.relative_to(ROOT)): found for p in sorted(TESTS.rglob("*.py"))
                 if (found := imported_test_modules(p))}
    assert not offenders, offenders


def test_no_fixture_is_named_like_what_it_stands_beside():
    assert misnamed_fixtures(sorted(TESTS.rglob("*.py"))) == []


def test_the_checks_see_what_they_forbid(tmp_path):
    t = "tests."  # the names below are put together, so that this file names no test module itself
    package = tmp_path / "tests" / "patterns"
    package.mkdir(parents=True)
    module = package / "test_example.py"
    module.write_text(f"from .test_spellings import inputs\nfrom . import test_forms, helpers\n"
                      f"import {t}runtime.test_run\nfrom .helpers import fuse_alone\n"
                      f"def f():\n    from ..engine.test_discovery import fake_dist\n"
                      f"SPEC = '--plugin {t}plugins.test_author_edges:OtherSwish'\n")
    assert sorted(imported_test_modules(module, tmp_path)) == [
        t + "engine.test_discovery", t + "patterns.test_forms", t + "patterns.test_spellings",
        t + "plugins.test_author_edges", t + "runtime.test_run"]
    conftest, beside, other = package / "conftest.py", package / "test_uses.py", package / "test_other.py"
    conftest.write_text("import pytest\n@pytest.fixture\ndef fuse():\n    return 1\n"
                        "@pytest.fixture(name='model')\ndef _model():\n    return 2\n")
    beside.write_text("def model():\n    return 3\n\ndef test_it(fuse, model):\n    pass\n")
    other.write_text("import pytest\n@pytest.fixture\ndef swish_file():\n    return 4\n")
    assert misnamed_fixtures([conftest, beside, other], tmp_path) == [
        "tests/patterns/conftest.py: fixture 'fuse' is surgeon.fuse's name",
        "tests/patterns/conftest.py: fixture 'model' beside tests/patterns/test_uses.py's own 'model'"]
