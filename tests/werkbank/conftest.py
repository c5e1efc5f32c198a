"""Fixtures of the core's tests."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.utils import reset as axes_reset

from tests.werkbank.login_rig import LOCKOUT_LIMIT


@pytest.fixture
def known_lockout(settings):
    """A known limit, and no lockout carried into or out of a test (the rows also roll back with it)."""
    settings.AXES_FAILURE_LIMIT = LOCKOUT_LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.WERKBANK_TRUSTED_PROXY_COUNT = 0
    axes_reset()
    yield
    axes_reset()
