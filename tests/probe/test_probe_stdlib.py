"""The probe package imports and runs with nothing but the Python standard library, and never Django."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MODULES = [
    "probe",
    "probe.__main__",
    "probe.burnin",
    "probe.burnin_report",
    "probe.common",
    "probe.fieldcheck",
    "probe.hostinfo",
    "probe.load",
    "probe.nvxml",
    "probe.report",
    "probe.sampler",
    "probe.schema",
    "probe.sel",
    "probe.upload",
    "probe.validate",
]
OPTIONAL_INSIDE_FUNCTIONS = {"torch", "cupy", "numpy"}


def test_all_modules_are_listed(repo_root: Path) -> None:
    files = {
        p.relative_to(repo_root).with_suffix("").as_posix().replace("/", ".")
        for p in (repo_root / "probe").rglob("*.py")
    }
    files = {f.removesuffix(".__init__") for f in files}
    assert files == set(MODULES)


def test_imports_with_only_the_standard_library(repo_root: Path, tmp_path: Path) -> None:
    """-S drops site-packages (no jsonschema, no Django, no torch); -E and -s ignore PYTHON* variables and the
    user site.

    The package directory is copied alone into an empty folder, as an operator would scp it.
    """
    code = (
        "import importlib, json, sys\n"
        f"mods = {MODULES!r}\n"
        "for m in mods: importlib.import_module(m)\n"
        "from probe.schema import load_schema\n"
        "from probe.validate import Validator\n"
        "Validator(load_schema())\n"
        "top = sorted({n.split('.')[0] for n in sys.modules})\n"
        "print(json.dumps({'top': top, 'stdlib': sorted(sys.stdlib_module_names)}))\n"
    )
    shutil.copytree(repo_root / "probe", tmp_path / "probe", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-S", "-E", "-s", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    foreign = [
        m
        for m in data["top"]
        if m not in data["stdlib"] and m not in ("probe", "__main__") and not m.startswith("_")
    ]
    assert foreign == []
    assert "django" not in data["top"] and "torch" not in data["top"]


def test_cli_runs_without_site_packages(repo_root: Path, fixtures_dir: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "probe",
            "parse-xml",
            str(fixtures_dir / "gpu" / "h200" / "nvidia-smi-q-idle.xml"),
        ],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gpus"][0]["name"] == "NVIDIA H200"


@pytest.mark.parametrize(
    "path", sorted(Path(__file__).resolve().parents[2].joinpath("probe").rglob("*.py")), ids=lambda p: p.name
)
def test_module_level_imports_are_stdlib(path: Path) -> None:
    """Static check: torch/cupy/numpy only inside functions; no third-party import anywhere; no Django."""
    tree = ast.parse(path.read_text(), filename=str(path))
    stdlib = set(sys.stdlib_module_names)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            assert top != "django", f"{path.name} imports Django"
            assert top in stdlib or top == "probe" or top in OPTIONAL_INSIDE_FUNCTIONS, f"{path.name}: {name}"
    for node in tree.body:  # statements at module level
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mod = node.names[0].name if isinstance(node, ast.Import) else (node.module or "")
            assert mod.split(".")[0] not in OPTIONAL_INSIDE_FUNCTIONS, f"{path.name}: {mod} at module level"
