"""Fixtures of the builds tests: the assembly bench and a bench with something of everything built on it."""

from tests.builds.bench_rig import bench, built  # noqa: F401 - fixtures
