"""A server ready for burn-in, for the ingest tests: seed 003's 7U machine of customer A, built by partner P.

Its six PCIe slots are Gen4 x16 (seed 003's EPYC 7643 platform) and hold the six GPUs of the seed-003 test
report, received at P's workshop and installed through the builds services; the server is `assembled`.
Customer B's order has one server built by partner Q.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.files.storage import default_storage

from builds.choices import ConnectorKind, ServerStatus
from builds.models import ChassisLayout, LayoutConnector, Server
from builds.services import find_component, server_assign_partner, server_install, servers_create_for_order
from burnin.models import (
    BmcEvent,
    BurnInRun,
    BurnInStage,
    Finding,
    GpuResult,
    TelemetryRollup,
    TelemetrySample,
)
from tests import factories
from tests.burnin.reports_rig import SEED003
from tests.tenants_rig import Tenants, api_client
from werkbank.models import AuditEvent

SLOTS = [f"PCIe-{n}" for n in range(1, 7)]
BURNIN_MODELS = (BurnInRun, BurnInStage, GpuResult, TelemetrySample, TelemetryRollup, BmcEvent, Finding)


@dataclass
class Rig:
    t: Tenants
    server: Server
    server_q: Server
    serials: list[str]

    def url(self, server: Server | None = None) -> str:
        return f"/api/v1/burnin/servers/{(server or self.server).asset_tag}/reports/"


def seed003_bytes() -> bytes:
    """The seed-003 report file as the probe would have written it."""
    return SEED003.read_bytes()


def encode(report: dict) -> bytes:
    """A report as the probe writes it (`probe.report`: compact, no NaN)."""
    return json.dumps(report, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode() + b"\n"


def make_rig(tenants: Tenants, *, status: str = ServerStatus.ASSEMBLED) -> Rig:
    report = json.loads(seed003_bytes())
    serials = [gpu["serial"] for gpu in report["gpus"]]
    # The part as the seed-003 report names its cards (the hardware check compares the model).
    gpu = factories.PartFactory(name="RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    chassis = factories.ChassisFactory(name="7U GPU chassis")
    configuration = factories.ConfigurationFactory(lines=[(gpu, len(serials)), (chassis, 1)])
    layout = ChassisLayout.objects.create(chassis=chassis, columns=6)
    LayoutConnector.objects.bulk_create(
        LayoutConnector(
            layout=layout,
            name=name,
            kind=ConnectorKind.PCIE_SLOT,
            position=position,
            numa_node=(position - 1) // 3,
            pcie_gen=4,
            pcie_lanes=16,
        )
        for position, name in enumerate(SLOTS, start=1)
    )
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration, server_count=1)
    (server,) = servers_create_for_order(order=order, actor=tenants.pm)
    server_assign_partner(server=server, actor=tenants.pm, partner=tenants.partner_p)
    factories.receive_stock(part=gpu, deliver_to=tenants.partner_p, lots={"L-7U": serials})
    for serial, slot in zip(serials, SLOTS, strict=True):
        component = find_component(serial=serial, user=tenants.user_p)
        server_install(server=server, actor=tenants.user_p, component=component, connector_name=slot)
    # As the checklist and mark_assembled leave it; the host name the seed-003 report was measured on.
    Server.objects.filter(pk=server.pk).update(status=status, hostname=report["host"]["hostname"])

    order_b = factories.OrderFactory(customer=tenants.customer_b, server_count=1)
    (server_q,) = servers_create_for_order(order=order_b, actor=tenants.pm)
    server_assign_partner(server=server_q, actor=tenants.pm, partner=tenants.partner_q)
    Server.objects.filter(pk=server_q.pk).update(status=ServerStatus.ASSEMBLED)
    return Rig(
        t=tenants,
        server=Server.objects.get(pk=server.pk),
        server_q=Server.objects.get(pk=server_q.pk),
        serials=serials,
    )


def post_report(
    user: Any,
    url: str,
    raw: bytes,
    *,
    gzip_body: bool = True,
    encoding_header: bool = True,
    key: str | None = "auto",
) -> Any:
    """POST a report as the probe does: gzip body, Content-Encoding: gzip, Idempotency-Key = its SHA-256."""
    headers = {}
    body = gzip.compress(raw, mtime=0) if gzip_body else raw
    if gzip_body and encoding_header:
        headers["Content-Encoding"] = "gzip"
    if key == "auto":
        headers["Idempotency-Key"] = hashlib.sha256(raw).hexdigest()
    elif key is not None:
        headers["Idempotency-Key"] = key
    return api_client(user).post(url, body, content_type="application/json", headers=headers)


def counts() -> dict[str, int]:
    """Rows of every burn-in table, and the audit trail: a refused or repeated upload changes none."""
    rows = {model.__name__: model.objects.count() for model in BURNIN_MODELS}
    rows["AuditEvent"] = AuditEvent.objects.count()
    return rows


def stored_files() -> list[str]:
    """The stored burn-in report files."""
    if not default_storage.exists("burnin"):
        return []
    found = []
    for folder in default_storage.listdir("burnin")[0]:
        found += [f"burnin/{folder}/{name}" for name in default_storage.listdir(f"burnin/{folder}")[1]]
    return sorted(found)


def fitted_report(server: Server) -> bytes:
    """The seed-003 report fitted to `server`'s installed hardware, as its probe would have written it:
    its host name, one card per installed GPU with that GPU's serial, named as the configuration's part."""
    from burnin.hardware import configuration_gpu_names, installed_gpus

    report = json.loads(seed003_bytes())
    installed = installed_gpus(server)
    names = configuration_gpu_names(server)
    gpus, series = [], {}
    for index, gpu in enumerate(installed):
        card = dict(report["gpus"][index % len(report["gpus"])], index=index, serial=gpu.serial)
        card["name"] = names[0] if names else card["name"]
        gpus.append(card)
        series[str(index)] = report["telemetry"]["gpu_series"][str(index % len(report["gpus"]))]
    report["gpus"], report["telemetry"]["gpu_series"] = gpus, series
    report["host"]["hostname"] = server.hostname
    return encode(report)


# --- the ingest tests' upload and its telemetry rows ------------------------------------------------------


def _seed() -> dict[str, Any]:
    """Seed 003's report, parsed."""
    return json.loads(seed003_bytes())


def _ingest(rig: Rig, capture: Any, raw: bytes | None = None, user: Any = None, **kwargs: Any) -> Any:
    """Upload `raw` (seed 003 by default) as `user` (partner P), running the on-commit callbacks."""
    with capture(execute=True):  # the report's file is written after the commit
        return post_report(user or rig.t.user_p, rig.url(), raw or seed003_bytes(), **kwargs)


def expected_samples(report: dict[str, Any]) -> list[tuple]:
    """The telemetry as rows, computed from the report independently of the ingest: (GPU, time, values)."""
    telemetry = report["telemetry"]
    names = telemetry["gpu_columns"]
    t0 = datetime.strptime(telemetry["t0"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    mapping = ["temp_c", "tlimit_c", "power_w", "sm_mhz", "util_pct", "clocks_event_mask", "pcie_gen"]
    mapping.append("pcie_width")
    rows = []
    for key, series in telemetry["gpu_series"].items():
        for row in series:
            value = dict(zip(names, row, strict=True))
            at = t0 + timedelta(seconds=value["t_offset_s"])
            rows.append((int(key), at, *(value.get(name) for name in mapping)))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def stored_samples(run: BurnInRun) -> list[tuple]:
    """The run's telemetry rows as stored, in the order of expected_samples."""
    fields = ["gpu_index", "at", "temp_c", "margin_c", "power_w", "sm_mhz", "util_pct", "clock_event_mask"]
    fields += ["pcie_gen", "pcie_width"]
    return list(TelemetrySample.objects.filter(run=run).order_by("gpu_index", "at").values_list(*fields))
