"""Werkbank probe: a stdlib-only commissioning agent for GPU servers.

The probe runs on the GPU server during burn-in, measures what a commissioning engineer would measure
(PCIe link under load, per-card host-to-device bandwidth, GEMM throughput and correctness, thermals,
ECC in the GPU and in the BMC event log) and writes one versioned JSON report.

Importing this package must not pull in anything outside the Python standard library (Python >= 3.10):
the operator may only have ``scp`` and ``python3`` on the machine. Heavy optional backends (PyTorch,
CuPy) are imported lazily inside :mod:`probe.load` and only during the load stages.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: Version of the report format written by this probe; the JSON schema in ``probe/schema`` pins it.
SCHEMA_VERSION = "1.1.0"

#: Value of the ``schema`` field that identifies a burn-in report.
SCHEMA_NAME = "gpu-burnin-report"

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "__version__"]
