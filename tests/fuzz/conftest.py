"""Fixtures of the API fuzzer: its world, on the assembly bench of the builds tests."""

from tests.builds.bench_rig import bench, built  # noqa: F401 - fixtures that fuzz_world stands on
from tests.fuzz.fuzz_rig import fuzz_world  # noqa: F401 - a fixture
