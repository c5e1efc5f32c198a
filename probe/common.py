"""Small shared helpers: UTC timestamps, duration parsing, subprocess wrappers, atomic writes."""

from __future__ import annotations

import base64
import contextlib
import gzip
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

# ``datetime.UTC`` only exists from Python 3.11; the probe must run on 3.10.
UTC = timezone.utc  # noqa: UP017


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def iso(dt: datetime | None) -> str | None:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SSZ`` (second precision, UTC)."""
    if dt is None:
        return None
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """Parse ``10s``, ``5m``, ``72h``, ``2d`` or a bare number of seconds into seconds.

    Raises ValueError with a one-line explanation for anything else.
    """
    match = _DURATION_RE.match(text or "")
    if not match:
        raise ValueError(
            f"invalid duration {text!r}: expected a number with an optional unit s, m, h or d "
            "(e.g. 10s, 5m, 72h)"
        )
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]


@dataclass
class CmdResult:
    """Outcome of running an external command; ``error`` is set when it could not run or failed."""

    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def which(name: str) -> str | None:
    """Locate an executable on PATH (``shutil.which``), isolated here so tests can reason about it."""
    return shutil.which(name)


def run_cmd(argv: list[str], timeout: float = 60.0) -> CmdResult:
    """Run a command and capture its output without raising.

    A missing binary, a timeout and a non-zero exit status all come back as ``error`` strings, because
    every caller must record *why* a source is unavailable instead of silently dropping it.
    """
    exe = which(argv[0]) if os.sep not in argv[0] else argv[0]
    if exe is None:
        return CmdResult(argv, None, "", "", f"{argv[0]} not found on PATH")
    try:
        proc = subprocess.run(
            [exe, *argv[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            errors="replace",
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return CmdResult(argv, None, "", "", f"{' '.join(argv)} timed out after {timeout:.0f}s")
    except OSError as exc:
        return CmdResult(argv, None, "", "", f"{argv[0]} could not be started: {exc}")
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        msg = detail[-1] if detail else ""
        return CmdResult(
            argv,
            proc.returncode,
            proc.stdout,
            proc.stderr,
            f"{' '.join(argv)} exited with status {proc.returncode}" + (f": {msg}" if msg else ""),
        )
    return CmdResult(argv, proc.returncode, proc.stdout, proc.stderr, None)


def gzip_b64(text: str | bytes | None) -> str | None:
    """Compress text with gzip and encode it as base64 ASCII (the report's ``gzip+base64`` encoding)."""
    if text is None:
        return None
    data = text.encode("utf-8") if isinstance(text, str) else text
    # mtime=0 keeps the encoding deterministic, so identical inputs give identical reports.
    return base64.b64encode(gzip.compress(data, mtime=0)).decode("ascii")


def gunzip_b64(data: str) -> str:
    """Inverse of :func:`gzip_b64`."""
    return gzip.decompress(base64.b64decode(data)).decode("utf-8")


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same directory and ``os.replace``.

    A reader (or a crash) never sees a half-written report: it sees the old file or the new one.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        # mkstemp creates 0600; a report is meant to be copied off the machine, so use the usual 0644.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
