"""Fixtures of the API fuzzer: its world, on the assembly bench of the builds tests, and the test's database
connection kept across WSGI requests."""

from tests.builds.bench_rig import bench, built  # noqa: F401 - fixtures that fuzz_world stands on
from tests.fuzz.fuzz_rig import fuzz_world, keep_the_test_connection  # noqa: F401 - fixtures
