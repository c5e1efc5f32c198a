"""A server process freezes its startup heap (werkbank.apps.freeze_startup_heap, called by werkbank/wsgi.py
and werkbank/asgi.py): the collector then no longer scans Django's and the apps' long-lived objects on each
full collection, which had put ~100 ms on every few 200-row API pages (bench/bench_orders.py times both)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("entry", ["werkbank.wsgi", "werkbank.asgi"])
def test_the_entry_point_freezes_the_loaded_application(entry):
    script = (
        "import gc, sys\n"
        f"import {entry}\n"
        "frozen = gc.get_freeze_count()\n"
        # The URL configuration was loaded before the freeze: a view module is imported and frozen with it.
        "assert 'pm.views.pipeline' in sys.modules, 'the views were not loaded before the freeze'\n"
        "print(frozen)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "werkbank.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 50_000  # Django and the apps: well over 100,000 objects
