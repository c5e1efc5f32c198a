"""The burn-in report JSON schema (draft 2020-12), shared by the probe and the Werkbank server.

The server validates uploads against this very file, so it is package data of ``probe``::

    from probe.schema import SCHEMA_PATH, load_schema
    schema = load_schema()            # dict
    SCHEMA_PATH                       # pathlib.Path of report-v1.schema.json
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

SCHEMA_FILE = "report-v1.schema.json"

#: Filesystem path of the schema (the package is a plain directory, also when copied with scp).
SCHEMA_PATH = Path(__file__).resolve().parent / SCHEMA_FILE


@lru_cache(maxsize=1)
def _load_text() -> str:
    # importlib.resources also works when the package is installed as a zip/wheel.
    return resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def load_schema() -> dict[str, Any]:
    """Return a fresh copy of the report schema as a dict."""
    return json.loads(_load_text())


__all__ = ["SCHEMA_FILE", "SCHEMA_PATH", "load_schema"]
