"""Fail when a Python module passes MAX_MODULE_LINES lines or a function passes MAX_FUNCTION_LINES lines.

Usage: ``python scripts/check_sizes.py`` (from anywhere; it checks the repository it lives in). Standard
library only, so it runs before the virtual environment is built.

Every ``.py`` file of the repository is checked (the apps, ``probe/``, ``bench/``, ``scripts/``, ``tests/``,
``manage.py``), except what lies in a folder of SKIPPED_DIRS: migrations are generated, and ``.venv`` and
``var`` are not ours. A module's size is its number of lines; a function's (methods and nested functions
included) runs from its ``def`` line to its last line. Past the limit is an offender, and any offender
outside ``tests/`` makes the exit status 1.

The tests have their own limits (TEST_MAX_MODULE_LINES, TEST_MAX_FUNCTION_LINES), and the test modules and
functions over them today are listed in KNOWN_TEST_OFFENDERS: those are printed as warnings. A new test
offender fails, and so does a listed one that is back under its limit (remove it from the list), so the
list only shrinks. Tighten the test limits as the big test modules are split.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: CONVENTIONS.md: split a module into a package once it passes about 600 lines.
MAX_MODULE_LINES = 600
#: Issue #23's acceptance: no function passes about 120 lines.
MAX_FUNCTION_LINES = 120
TEST_MAX_MODULE_LINES = 600
TEST_MAX_FUNCTION_LINES = 120

#: Folders never checked, wherever they are: generated migrations, caches, what is not ours.
SKIPPED_DIRS = frozenset(
    {
        "migrations",
        ".venv",
        "var",
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".import_linter_cache",
        "node_modules",
    }
)
TESTS = "tests"

#: The test modules (a path) and test functions ("path::qualified.name") over the test limits today,
#: warned about instead of failing until they are split.
KNOWN_TEST_OFFENDERS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Offender:
    """A module or a function past its limit: `key` is its path, or "path::qualified.name"."""

    key: str
    line: int
    lines: int
    limit: int

    def describe(self) -> str:
        path, _, function = self.key.partition("::")
        what = f"function {function}" if function else "module"
        return f"{path}:{self.line}: {what} has {self.lines} lines (limit {self.limit})"


def python_files(root: Path) -> list[Path]:
    """Every .py file under `root`, less those in a folder of SKIPPED_DIRS, in a stable order."""
    return sorted(
        path
        for path in root.rglob("*.py")
        if not SKIPPED_DIRS.intersection(path.relative_to(root).parts[:-1])
    )


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of `tree` with its qualified name (Class.method, outer.inner)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            found.append((name, node))
            found.extend(_functions(node, f"{name}."))
        elif isinstance(node, ast.ClassDef):
            found.extend(_functions(node, f"{prefix}{node.name}."))
        else:
            found.extend(_functions(node, prefix))
    return found


def offenders(path: Path, *, root: Path) -> list[Offender]:
    """The module `path` and its functions, where they pass their limits."""
    relative = path.relative_to(root).as_posix()
    in_tests = relative.split("/", 1)[0] == TESTS
    module_limit = TEST_MAX_MODULE_LINES if in_tests else MAX_MODULE_LINES
    function_limit = TEST_MAX_FUNCTION_LINES if in_tests else MAX_FUNCTION_LINES
    source = path.read_text(encoding="utf-8")
    found = []
    lines = len(source.splitlines())
    if lines > module_limit:
        found.append(Offender(relative, 1, lines, module_limit))
    for name, node in _functions(ast.parse(source, filename=relative)):
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length > function_limit:
            found.append(Offender(f"{relative}::{name}", node.lineno, length, function_limit))
    return found


def check(root: Path, known: frozenset[str] = KNOWN_TEST_OFFENDERS) -> tuple[list[str], list[str]]:
    """(failures, warnings), one sentence each, for the repository at `root`."""
    failures, warnings = [], []
    seen: set[str] = set()
    for path in python_files(root):
        for offender in offenders(path, root=root):
            if offender.key in known:
                seen.add(offender.key)
                warnings.append(f"{offender.describe()}: a known test offender, split it")
            else:
                failures.append(offender.describe())
    for key in sorted(known - seen):
        failures.append(f"{key}: within its limits now; remove it from KNOWN_TEST_OFFENDERS")
    return failures, warnings


def main() -> int:
    failures, warnings = check(ROOT)
    for warning in warnings:
        print(f"warning: {warning}")
    for failure in failures:
        print(failure)
    if failures:
        print(
            f"{len(failures)} over the limits (modules {MAX_MODULE_LINES} lines, functions "
            f"{MAX_FUNCTION_LINES}): split the module into a package, extract well-named helpers.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
