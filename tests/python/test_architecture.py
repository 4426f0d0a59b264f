"""The Python package's house rules, checked from its source in the manner of rust-analyzer's tidy
tests: the floors of docs/architecture.md (a module imports only from its own floor's room or
floors below), no import circles, one door to the compiled engine, every command a module of
`sanlab.commands` in the command table, `sanlab run` importing no other command's machinery, and
the size limits (files up to 800 lines, functions up to 100)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from sanlab import commands

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "sanlab"

FLOORS: list[set[str]] = [
    {"_core", "errors", "document", "formatting", "toml_text", "intervals"},
    {"replications"},
    {"engine", "notes", "input_files"},
    {"resolved", "results"},
    {"analysis"},
    {"views"},
    {"report"},
    {"export"},
    {"progress", "runs", "hostimport", "lint"},
    {"sweep", "calibration"},
    {"advise", "calibrate", "headroom"},
    {"commands"},
    {"cli"},
    {"_launch", "__init__"},
]
"""Rooms (a top-level module, or a folder) from the ground up, as docs/architecture.md draws them."""

FLOOR_OF = {room: floor for floor, rooms in enumerate(FLOORS) for room in rooms}


def _modules() -> dict[str, Path]:
    found = {"sanlab._core": PACKAGE / "_core.pyi"}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> set[str]:
    """The sanlab modules `module` imports, at its top or inside a function."""
    targets: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names if alias.name.split(".")[0] == "sanlab")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "sanlab":
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in MODULES else base)
    return targets


IMPORTS = {module: _imported(module, path) for module, path in MODULES.items() if path.suffix == ".py"}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_room_has_a_floor() -> None:
    rooms = {_room(module) for module in MODULES}
    assert rooms == set(FLOOR_OF), f"rooms without a floor: {rooms - set(FLOOR_OF)}; floors without a room: {set(FLOOR_OF) - rooms}"


def test_no_import_runs_up_a_floor_or_across_one() -> None:
    wrong = [
        f"{module} -> {target}"
        for module, targets in IMPORTS.items()
        for target in targets
        if _room(module) != _room(target) and FLOOR_OF[_room(target)] >= FLOOR_OF[_room(module)]
    ]
    assert not wrong, "imports up a floor, or between rooms of one floor:\n" + "\n".join(sorted(wrong))


def _cycle() -> list[str] | None:
    """An import circle among the modules, or None."""
    state: dict[str, int] = defaultdict(int)  # 0 unseen, 1 on the stack, 2 done
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(IMPORTS.get(module, ())):
            if target == module or target not in MODULES:
                continue
            if state[target] == 1:
                return [*stack[stack.index(target) :], target]
            if state[target] == 0 and (found := visit(target)):
                return found
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(IMPORTS):
        if state[module] == 0 and (found := visit(module)):
            return found
    return None


def test_no_import_circles() -> None:
    assert _cycle() is None, " -> ".join(_cycle() or [])


def test_only_the_engine_module_imports_the_compiled_engine() -> None:
    importers = sorted(module for module, targets in IMPORTS.items() if "sanlab._core" in targets)
    assert importers == ["sanlab.engine"]


def test_the_rules_see_imports() -> None:
    """The checks must not go blind: imports of each kind are found."""
    assert "sanlab._core" in IMPORTS["sanlab.engine"]  # from sanlab import _core
    assert "sanlab.commands" in IMPORTS["sanlab.cli"]  # from sanlab import commands
    assert "sanlab.engine" in IMPORTS["sanlab.runs"]
    assert {"sanlab.commands.options", "sanlab.export.runfolder"} <= IMPORTS["sanlab.commands.run"]


def test_every_command_is_a_module_in_the_table() -> None:
    modules = {path.stem for path in (PACKAGE / "commands").glob("*.py")} - {"__init__", "options", "terminal"}
    assert {module for module, _ in commands.COMMANDS.values()} == modules
    for name in commands.COMMANDS:
        module = commands.load(name)
        assert callable(module.register) and callable(module.main), name


def test_sanlab_run_imports_no_other_command() -> None:
    """The start-up of `sanlab run` does not import advise, import, lint, sweep or calibrate."""
    scenario = PACKAGE.parents[1] / "tests" / "data" / "scenarios" / "one_vm.toml"
    program = (
        "import sys\n"
        "from sanlab.cli import main\n"
        f"code = main(['run', {str(scenario)!r}, '--duration', '0.1s', '--json'])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('sanlab'))), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.strip().splitlines()[-1].split())
    assert "sanlab.commands.run" in loaded
    unwanted = {"sanlab.advise", "sanlab.hostimport", "sanlab.lint", "sanlab.sweep", "sanlab.calibration", "sanlab.runs"}
    assert not loaded & unwanted, sorted(loaded & unwanted)
    assert not any(module.startswith("sanlab.commands.") for module in loaded - {"sanlab.commands.run", "sanlab.commands.options", "sanlab.commands.terminal"})


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_sizes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= 800, f"{path.name}: {text.count(chr(10))} lines; split it by concern"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 100
    ]
    assert not long, f"{path.name}: functions over 100 lines: {', '.join(long)}"
