"""Fixtures of the portal tests: the audience tests' world with a blacklisted connector on it."""

from tests.portal.portal_rig import audience_world, portal_world  # noqa: F401 - fixtures
