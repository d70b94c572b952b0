"""The Python side imports one way: scripts/export_reference.py uses the kforge_tasks package, and no
module of the package imports the script back (bulk.py runs it as a separate process instead)."""
import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "scripts" / "kforge_tasks"


def imported_names(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_module_of_the_package_imports_the_script():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 5, f"the package was not found at {PACKAGE}"
    for module in modules:
        assert "export_reference" not in imported_names(module), f"{module} imports export_reference"


def test_every_module_imports_without_the_script_on_the_path():
    names = [m.stem for m in sorted(PACKAGE.glob("*.py")) if m.stem != "__init__"]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n"
            "    importlib.import_module('kforge_tasks.' + name)\n"
            "assert 'export_reference' not in sys.modules, 'export_reference was imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO / "scripts", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def package_imports(path):
    """The package's modules that `path` imports, at its top or inside a function (`from . import x`,
    `from .x import y`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update([node.module] if node.module else (alias.name for alias in node.names))
    return names


def test_the_package_has_no_import_cycle():
    graph = {m.stem: package_imports(m) for m in PACKAGE.glob("*.py") if m.stem != "__init__"}
    graph = {m: {n for n in deps if n in graph} for m, deps in graph.items()}
    done, path = set(), []

    def visit(module):
        if module in path:
            cycle = path[path.index(module):] + [module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for dep in sorted(graph[module]):
            visit(dep)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
