"""What the apps' demo loaders share while `seed_demo` runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEMO_PASSWORD = "werkbank-demo"


@dataclass
class DemoContext:
    """Objects created (or found) by the loaders of the apps below, for the apps above."""

    pm: Any = None
    created: int = 0
    organizations: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, Any] = field(default_factory=dict)
    orders: dict[str, Any] = field(default_factory=dict)
    logins: list[tuple[str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
