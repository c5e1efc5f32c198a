"""The repository stands alone: no file points at a folder beside it.

A fresh clone has nothing next to it, so a test, the demo or a benchmark that reads (or a document that
cites) a path outside the repository breaks there. The needles are built from pieces so that this file
does not match itself.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".git", ".venv", "var", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}
SHARED = "sha" + "red"
NEEDLES = (
    ".." + "/" + SHARED,
    SHARED + "/" + "fixtures",
    SHARED + "/" + "reference",
    "/work" + "/" + SHARED,
)


def _project_files() -> list[Path]:
    """Tracked files plus new ones git does not ignore; the whole tree less caches outside a checkout."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO_ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, dirs, names in os.walk(REPO_ROOT):
            dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
            files.extend(Path(folder, name) for name in names)
        return files
    return [REPO_ROOT / name for name in listing.decode().split("\0") if name]


def _offending_lines(path: Path, root: Path = REPO_ROOT) -> list[str]:
    data = path.read_bytes()
    if b"\0" in data:  # binary
        return []
    text = data.decode("utf-8", errors="replace")
    return [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if any(needle in line for needle in NEEDLES)
    ]


def test_the_scan_sees_the_project() -> None:
    files = {path.relative_to(REPO_ROOT).as_posix() for path in _project_files()}
    assert {"README.md", "pyproject.toml", "tests/probe/conftest.py", "werkbank/urls.py"} <= files


def test_the_scan_finds_a_reference_to_a_folder_beside_the_repository(tmp_path: Path) -> None:
    planted = tmp_path / "README.md"
    planted.write_text(f"intro\nSee `{NEEDLES[0]}/DESIGN.md`.\nfixtures: {NEEDLES[1]}/gpu\n")
    assert _offending_lines(planted, root=tmp_path) == [
        f"README.md:2: See `{NEEDLES[0]}/DESIGN.md`.",
        f"README.md:3: fixtures: {NEEDLES[1]}/gpu",
    ]


def test_no_file_refers_outside_the_repository() -> None:
    offending = [line for path in _project_files() if path.is_file() for line in _offending_lines(path)]
    assert not offending, "files refer to folders outside the repository:\n" + "\n".join(offending)
