"""Migration tests run their script in a separate process on a temporary SQLite file, so that the suite's
own database is never migrated backwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# What every script starts with: Django set up, and `migrate(targets)`, which returns the apps of that state.
PRELUDE = """
import json
import django
django.setup()
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps
"""


def run_migration_script(script: str, tmp_path: Path) -> Any:
    """Run PRELUDE and then `script` (which prints one JSON line last) on a fresh SQLite file under
    `tmp_path`; return that JSON."""
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "WERKBANK_ENV"}}
    env.update(
        DJANGO_SETTINGS_MODULE="werkbank.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'migration.sqlite3'}",
        WERKBANK_VAR_DIR=str(tmp_path / "var"),
    )
    command = [sys.executable, "-c", PRELUDE + script]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
