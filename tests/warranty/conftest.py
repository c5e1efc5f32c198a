"""Fixtures of the warranty tests: the handed-over world on the builds tests' bench."""

from tests.warranty.handover_rig import bench, handed, world  # noqa: F401 - fixtures
