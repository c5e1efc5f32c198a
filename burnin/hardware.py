"""Evidence bound to the hardware it measured: a report is compared with the server's installed GPUs.

At ingest (`burnin.services.ingest.report_ingest`) the report's GPUs must be the GPUs installed in the
server now, or the report is refused with one 409 `hardware_mismatch` that lists every difference and
nothing is stored:

- the number of GPUs reported against the number installed;
- each reported serial against the installed GPU serials, in `inventory.serials`' normal form (any letter
  case); an installed serial the report lacks is named too;
- each reported GPU model against the configuration's GPU part (names compared without "NVIDIA", case,
  spaces and punctuation; one contains the other);
- the host name the probe saw against the server's host name (its first DNS label, any case), where the
  report states one.

GeForce cards (the RTX 5090 of seed 000) report no serial: their `nvidia-smi` says "N/A". They are bound
by UUID instead. The first counting run after the server's last GPU change records each card's UUID at its
PCI address; every later run must show the same UUIDs at the same addresses. A card's PCI address is the
slot it sits in: the connector map states no PCI addresses, so the binding is to the address, and the
pages say the binding is by UUID.

Which runs count (`counting_runs`): only those uploaded after the last install, removal or move of a GPU.
A run uploaded before it was measured on other hardware, or the same cards in other slots: it is `stale`,
shown with the change that made it so, and never judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from builds.models import Installation, Server
from burnin.choices import HardwareBinding
from burnin.models import BurnInRun, GpuResult
from inventory.choices import PartCategory
from inventory.models import Component
from inventory.serials import normalize_serial
from orders.selectors import configuration_lines

#: What `nvidia-smi` prints where a card has no serial (GeForce cards; seed 000's RTX 5090).
NO_SERIAL = frozenset({"", "N/A", "[N/A]", "NOT AVAILABLE", "[NOT SUPPORTED]", "NOT SUPPORTED", "0"})


@dataclass(frozen=True)
class InstalledGpu:
    """A GPU installed in the server now, and the connector it sits in."""

    component_id: int
    serial: str
    connector: str
    pcie_gen: int | None
    pcie_lanes: int | None

    @property
    def key(self) -> str:
        return normalize_serial(self.serial)


@dataclass(frozen=True)
class GpuChange:
    """The last install, removal or move of a GPU in a server: what makes the runs before it stale."""

    at: datetime
    removed: bool
    serial: str
    connector: str

    def sentence(self) -> str:
        """The change in words. The removal's reason is left out: it is the builder's note, and the
        customer reads this sentence too (the bench's timeline keeps it)."""
        when = f"{self.at:%Y-%m-%d %H:%M} UTC"
        if self.removed:
            return _("GPU %(serial)s was removed from %(connector)s on %(when)s") % {
                "serial": self.serial,
                "connector": self.connector,
                "when": when,
            }
        return _("GPU %(serial)s was installed in %(connector)s on %(when)s") % {
            "serial": self.serial,
            "connector": self.connector,
            "when": when,
        }


class HardwareMismatch(Exception):
    """The report's GPUs are not the installed GPUs: every difference, as sentences."""

    def __init__(self, differences: list[str]) -> None:
        super().__init__("; ".join(differences))
        self.differences = differences


def installed_gpus(server: Server) -> list[InstalledGpu]:
    """The server's GPUs installed now (any connector), in connector order."""
    installations = (
        Installation.objects.active()
        .filter(server=server, component__part__category=PartCategory.GPU)
        .select_related("component", "connector")
        .order_by("connector__position", "pk")
    )
    return [
        InstalledGpu(
            component_id=each.component_id,
            serial=each.component.serial,
            connector=each.connector.name,
            pcie_gen=each.connector.pcie_gen,
            pcie_lanes=each.connector.pcie_lanes,
        )
        for each in installations
    ]


def last_gpu_change(server: Server) -> GpuChange | None:
    """The server's latest GPU install or removal (a move or swap is a removal and an install)."""
    return last_gpu_changes([server.pk]).get(server.pk)


def last_gpu_changes(server_ids: Sequence[int]) -> dict[int, GpuChange]:
    """`last_gpu_change` of many servers, in one query (the installations' history is small per server)."""
    changes: dict[int, GpuChange] = {}
    rows = Installation.objects.filter(
        server_id__in=list(server_ids), component__part__category=PartCategory.GPU
    ).values_list("server_id", "installed_at", "removed_at", "component__serial", "connector__name")
    for server_id, installed_at, removed_at, serial, connector in rows:
        for at, removed in ((installed_at, False), (removed_at, True)):
            if at is None:
                continue
            known = changes.get(server_id)
            if known is None or at > known.at:
                changes[server_id] = GpuChange(
                    at=at,
                    removed=removed,
                    serial=serial,
                    connector=connector,
                )
    return changes


def is_stale(run: BurnInRun, change: GpuChange | None) -> bool:
    """A run uploaded before the last GPU change was measured on other hardware (or other slots)."""
    return change is not None and run.created_at < change.at


def has_serial(serial: str | None) -> bool:
    """Whether a GPU's reported serial is one: GeForce cards report "N/A" (`NO_SERIAL`)."""
    return normalize_serial(serial) not in NO_SERIAL


def serial_ranges(serials: Iterable[str]) -> str:
    """Serials as a reader takes them in: runs of consecutive numbers as "1603003000001–6"."""
    items = sorted(set(serials), key=lambda s: (len(s), s))
    groups: list[list[str]] = []
    for serial in items:
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and serial.isdigit()
            and last.isdigit()
            and len(serial) == len(last)
            and int(serial) == int(last) + 1
        ):
            groups[-1].append(serial)
        else:
            groups.append([serial])
    parts = []
    for group in groups:
        if len(group) < 3:
            parts.extend(group)
            continue
        first, end = group[0], group[-1]
        common = 0
        while common < len(first) and first[common] == end[common]:
            common += 1
        parts.append(f"{first}–{end[common:]}")
    return ", ".join(parts)


#: Words of a GPU's name that do not tell one model from another: the brand, the board's edition, memory.
_FILLER = re.compile(r"^(nvidia|geforce|edition|workstation|\d+gb|gddr\d\w*|hbm\d\w*)$")


def _model_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower().replace("nvidia", ""))


def _model_words(name: str) -> frozenset[str]:
    words = re.findall(r"[0-9a-z]+", re.sub(r"\b\d+\s*(gb|gib)\b", " ", name.lower().replace("-", "")))
    return frozenset(word for word in words if not _FILLER.match(word))


def _model_matches(reported: str, expected: Iterable[str]) -> bool:
    """The reported name is the part's: one contains the other ("NVIDIA GeForce RTX 5090" and
    "RTX 5090"), or both name the same model once brand, edition and memory are left out ("NVIDIA RTX PRO
    6000 Blackwell Max-Q Workstation Edition" and "RTX PRO 6000 Blackwell Max-Q 96 GB GDDR7"). A Server
    Edition card is not the Max-Q part: "max-q" is a word of the model."""
    got, words = _model_key(reported), _model_words(reported)
    return any(
        want and (_model_key(want) in got or got in _model_key(want) or _model_words(want) == words)
        for want in expected
    )


def configuration_gpu_names(server: Server) -> list[str]:
    """The names (and MPNs) of the GPU parts in the server's configuration."""
    names: list[str] = []
    for line in configuration_lines(order=server.order):
        if line.part.category == PartCategory.GPU:
            names += [line.part.name, line.part.mpn]
    return [name for name in names if name]


def uuid_reference(server: Server, change: GpuChange | None) -> dict[str, str] | None:
    """The UUID → PCI address of the serial-less GPUs of the server's first counting run, or None when
    no run counts yet (the report under ingest then records them)."""
    runs = BurnInRun.objects.filter(server=server, binding=HardwareBinding.UUID)
    if change is not None:
        runs = runs.filter(created_at__gte=change.at)
    first = runs.order_by("id").first()
    if first is None:
        return None
    rows = GpuResult.objects.filter(run=first).order_by("index")
    return {row.uuid: row.pci_bus_id for row in rows if not has_serial(row.serial)}


def _host_differs(report: Mapping[str, Any], server: Server) -> str | None:
    reported = ((report.get("host") or {}).get("hostname") or "").strip()
    if not reported or not server.hostname:
        return None
    if reported.split(".")[0].lower() == server.hostname.split(".")[0].lower():
        return None
    return _("The report was measured on host %(reported)s; this server is %(hostname)s.") % {
        "reported": reported,
        "hostname": server.hostname,
    }


def gpu_key(serial: str | None, uuid: str | None) -> str:
    """How a GPU is matched from run to run: its normalised serial, or its UUID for a card that reports
    no serial (GeForce)."""
    return normalize_serial(serial) if has_serial(serial) else (uuid or "").strip()


def check_hardware(*, server: Server, report: Mapping[str, Any], allow_missing: bool = False) -> str:
    """The binding (`HardwareBinding`) of a report whose GPUs are the installed ones; raises
    `HardwareMismatch` with every difference otherwise.

    With `allow_missing` (a field check: a GPU that fell off the bus in the field is the very drift to
    record), an installed GPU that the report lacks is no difference; a GPU the server does not hold is."""
    installed = installed_gpus(server)
    gpus = list(report["gpus"])
    differences: list[str] = []
    if len(gpus) > len(installed) or (len(gpus) < len(installed) and not allow_missing):
        differences.append(
            ngettext(
                "%(reported)d GPU reported, %(installed)d installed.",
                "%(reported)d GPUs reported, %(installed)d installed.",
                len(gpus),
            )
            % {"reported": len(gpus), "installed": len(installed)}
        )
    by_key = {gpu.key: gpu for gpu in installed}
    with_serial = [gpu for gpu in gpus if has_serial(gpu.get("serial"))]
    serialless = [gpu for gpu in gpus if not has_serial(gpu.get("serial"))]
    seen: set[str] = set()
    strangers: list[str] = []
    for gpu in with_serial:
        key = normalize_serial(gpu["serial"])
        if key in seen:
            differences.append(_("GPU serial %(serial)s is reported twice.") % {"serial": gpu["serial"]})
        seen.add(key)
        if key not in by_key:
            strangers.append(gpu["serial"].strip())
    if strangers:
        elsewhere = _installed_elsewhere(strangers, server)
        for serial in strangers:
            if normalize_serial(serial) in elsewhere:
                differences.append(
                    _("GPU serial %(serial)s is installed in another server.") % {"serial": serial}
                )
            else:
                differences.append(_("GPU serial %(serial)s is installed in no server.") % {"serial": serial})
    missing = [gpu.serial for gpu in installed if gpu.key not in seen]
    if missing and not serialless and not allow_missing:
        differences.append(
            ngettext(
                "%(serials)s is installed here and missing from the report.",
                "%(serials)s are installed here and missing from the report.",
                len(missing),
            )
            % {"serials": serial_ranges(missing)}
        )
    expected = configuration_gpu_names(server)
    if expected:
        for name in sorted({(gpu.get("name") or "").strip() for gpu in gpus} - {""}):
            if not _model_matches(name, expected):
                count = sum(1 for gpu in gpus if (gpu.get("name") or "").strip() == name)
                differences.append(
                    ngettext(
                        "%(count)d GPU is an %(name)s; the configuration's GPU is %(expected)s.",
                        "%(count)d GPUs are %(name)s; the configuration's GPU is %(expected)s.",
                        count,
                    )
                    % {"count": count, "name": name, "expected": expected[0]}
                )
    host = _host_differs(report, server)
    if host:
        differences.append(host)
    if serialless and not differences:
        differences += _uuid_differences(server, serialless)
    if differences:
        raise HardwareMismatch(differences)
    return HardwareBinding.UUID if serialless else HardwareBinding.SERIAL


def _installed_elsewhere(serials: Sequence[str], server: Server) -> set[str]:
    components = (
        Component.objects.with_serial(*serials)
        .filter(installations__removed_at__isnull=True)
        .exclude(installations__server=server, installations__removed_at__isnull=True)
    )
    return {normalize_serial(serial) for serial in components.values_list("serial", flat=True)}


def _uuid_differences(server: Server, serialless: Sequence[Mapping[str, Any]]) -> list[str]:
    reference = uuid_reference(server, last_gpu_change(server))
    if reference is None:
        return []  # the first counting run: it records the UUIDs
    differences = []
    reported = {(gpu.get("uuid") or ""): (gpu.get("pci_bus_id") or "") for gpu in serialless}
    for uuid, address in reported.items():
        if uuid not in reference:
            differences.append(
                _(
                    "GPU %(uuid)s at %(address)s is not one of the GPUs this server's first run since "
                    "its last GPU change recorded (cards without a serial are bound by UUID)."
                )
                % {"uuid": uuid or "?", "address": address or "?"}
            )
        elif reference[uuid] and address and reference[uuid].lower() != address.lower():
            differences.append(
                _("GPU %(uuid)s is at %(address)s; it was recorded at %(recorded)s.")
                % {"uuid": uuid, "address": address, "recorded": reference[uuid]}
            )
    for uuid, address in reference.items():
        if uuid not in reported:
            differences.append(
                _("GPU %(uuid)s recorded at %(address)s is missing from the report.")
                % {"uuid": uuid, "address": address or "?"}
            )
    return differences
