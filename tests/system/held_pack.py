"""Imported by a test worker (`celery worker --include tests.system.held_pack`): holds the worker inside
a handover pack's render while a hold file exists, so a test can kill it mid-task (the pack is running,
nothing is stored yet). The marker file holds the id of the process that renders."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from warranty.services import packs

_render = packs.pack_pdf


def held_pack_pdf(*args: Any, **kwargs: Any) -> bytes:
    hold = Path(os.environ.get("WERKBANK_TEST_PACK_HOLD", "/nonexistent"))
    if hold.exists():
        hold.with_suffix(".rendering").write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while hold.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return _render(*args, **kwargs)


packs.pack_pdf = held_pack_pdf
