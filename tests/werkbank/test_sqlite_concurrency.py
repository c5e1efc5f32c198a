"""The embedded SQLite default holds a small team's concurrent writes (issue #16, defect 12).

Sixty threads write at once through a service (a read, then writes, in one transaction: the pattern that
makes SQLite answer "database is locked" at once, without waiting, when a deferred transaction must turn
from reader into writer). They run in a separate process on a temporary SQLite file with the project's own
settings for SQLite (werkbank/settings.py), whatever database the test suite itself uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 60

SCRIPT = """
import json, sys, threading
import django
django.setup()
from django.core.management import call_command
from django.db import connection, connections

call_command("migrate", verbosity=0)
options = dict(connection.settings_dict["OPTIONS"])
journal = connection.cursor().execute("PRAGMA journal_mode").fetchone()[0]
connection.close()

from inventory.models import Supplier
from inventory.services import supplier_create

writers = int(sys.argv[1])
start = threading.Barrier(writers)
errors = []

def write(index):
    start.wait()
    try:
        supplier_create(actor=None, name=f"Concurrent supplier {index}", country="DE")
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connections.close_all()

threads = [threading.Thread(target=write, args=(index,)) for index in range(writers)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({
    "errors": errors,
    "suppliers": Supplier.objects.filter(name__startswith="Concurrent supplier").count(),
    "options": options,
    "journal_mode": journal,
}))
"""


def test_sixty_concurrent_writes_on_sqlite_all_succeed(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "WERKBANK_ENV", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="werkbank.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        WERKBANK_VAR_DIR=str(tmp_path / "var"),
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(WRITERS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    locked = [error for error in result["errors"] if "database is locked" in error]
    assert locked == [], f"{len(locked)} of {WRITERS} writes: database is locked"
    assert result["errors"] == []
    assert result["suppliers"] == WRITERS
    assert result["journal_mode"] == "wal"
    assert result["options"]["transaction_mode"] == "IMMEDIATE"
