"""Helpers of the browser tests: where Chromium is, the window sizes they draw pages at, and screenshots.

tests/e2e/conftest.py starts the browser (a fixture).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REQUIRE_SERVICES = os.environ.get("WERKBANK_REQUIRE_SERVICES") == "1"


def need_browser() -> None:
    """Skip, or under WERKBANK_REQUIRE_SERVICES=1 fail, where Chromium or its driver is missing."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    message = f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver"
    if REQUIRE_SERVICES:
        pytest.fail(message)
    pytest.skip(message)


PHONE = (390, 844)
DESKTOP = (1280, 900)


def screenshot(driver: Any, path: Path, *, width: int, full: bool = True) -> Path:
    """Save the page at `width` CSS pixels; `full` grows the window to the page's height first."""
    driver.set_window_size(width, DESKTOP[1])
    if full:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(int(height) + 120, 6000))
    driver.save_screenshot(str(path))
    return path
