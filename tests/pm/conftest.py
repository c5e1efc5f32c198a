"""Fixtures of the PM page tests: the handed-over world of the warranty tests (a deployed server with a
ready pack), for the order page's server steps."""

from tests.warranty.handover_rig import bench, world  # noqa: F401 - fixtures
