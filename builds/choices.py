"""Server statuses with their transition map (README.md, Lifecycle), connector kinds and build steps."""

from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from inventory.choices import PartCategory


class ServerStatus(models.TextChoices):
    PLANNED = "planned", pgettext_lazy("server status", "Planned")
    ASSEMBLING = "assembling", pgettext_lazy("server status", "Assembling")
    ASSEMBLED = "assembled", pgettext_lazy("server status", "Assembled")
    BURN_IN = "burn_in", pgettext_lazy("server status", "Burn-in")
    BURN_IN_PASSED = "burn_in_passed", pgettext_lazy("server status", "Burn-in passed")
    BURN_IN_FAILED = "burn_in_failed", pgettext_lazy("server status", "Burn-in failed")
    DEPLOYED = "deployed", pgettext_lazy("server status", "Deployed")
    HANDED_OVER = "handed_over", pgettext_lazy("server status", "Handed over")


def status_in_sentence(status: str) -> str:
    """A server status's label, in the active language, as a sentence about the server says it. English
    writes it in lower case ("Server wb-2026-0001-03 is planned"); German keeps the label's capitals (its
    nouns: "In Montage", "Stresstest"), and its sentences quote the label as it stands."""
    label = str(ServerStatus(status).label)
    language = translation.get_language()
    return label.lower() if language is None or language.startswith("en") else label


SERVER_TRANSITIONS: dict[str, frozenset[str]] = {
    ServerStatus.PLANNED: frozenset({ServerStatus.ASSEMBLING}),
    ServerStatus.ASSEMBLING: frozenset({ServerStatus.ASSEMBLED}),
    # Only the probe's report moves an assembled server on (into burn-in): a fault found after assembly
    # goes back to the bench as the rework of a failed burn-in, never by undoing `assembled`.
    ServerStatus.ASSEMBLED: frozenset({ServerStatus.BURN_IN}),
    ServerStatus.BURN_IN: frozenset({ServerStatus.BURN_IN_PASSED, ServerStatus.BURN_IN_FAILED}),
    ServerStatus.BURN_IN_FAILED: frozenset({ServerStatus.ASSEMBLING}),  # rework
    ServerStatus.BURN_IN_PASSED: frozenset({ServerStatus.DEPLOYED}),
    ServerStatus.DEPLOYED: frozenset({ServerStatus.HANDED_OVER}),
    ServerStatus.HANDED_OVER: frozenset(),
}
#: Statuses of a server that has been assembled, whatever happened since (an order may start burn-in only
#: when all of its servers are in one of them).
AT_LEAST_ASSEMBLED = frozenset(
    {
        ServerStatus.ASSEMBLED,
        ServerStatus.BURN_IN,
        ServerStatus.BURN_IN_PASSED,
        ServerStatus.BURN_IN_FAILED,
        ServerStatus.DEPLOYED,
        ServerStatus.HANDED_OVER,
    }
)
#: Statuses of a server that has been deployed, whatever happened since: it stands in its rack, in service
#: (deployment places it; burnin takes its field checks and post-repair runs only then).
DEPLOYED_OR_LATER = frozenset({ServerStatus.DEPLOYED, ServerStatus.HANDED_OVER})
#: Statuses in which the partner may change what is installed.
BENCH_OPEN = frozenset({ServerStatus.PLANNED, ServerStatus.ASSEMBLING, ServerStatus.BURN_IN_FAILED})


class ConnectorKind(models.TextChoices):
    CHASSIS = "chassis", _("Chassis")
    BOARD = "board", _("Mainboard mount")
    CPU_SOCKET = "cpu_socket", _("CPU socket")
    PCIE_SLOT = "pcie_slot", _("PCIe slot")
    RISER_PORT = "riser_port", _("Riser port")
    GPU_POWER = "gpu_power", _("GPU power cable")
    DIMM_SLOT = "dimm_slot", _("DIMM slot")
    NVME_BAY = "nvme_bay", _("NVMe bay")
    PSU_BAY = "psu_bay", _("PSU bay")


#: Which connector kinds take a part of each category.
KINDS_FOR_CATEGORY: dict[str, frozenset[str]] = {
    PartCategory.CHASSIS: frozenset({ConnectorKind.CHASSIS}),
    PartCategory.MOTHERBOARD: frozenset({ConnectorKind.BOARD}),
    PartCategory.CPU: frozenset({ConnectorKind.CPU_SOCKET}),
    PartCategory.GPU: frozenset({ConnectorKind.PCIE_SLOT, ConnectorKind.RISER_PORT}),
    PartCategory.MEMORY: frozenset({ConnectorKind.DIMM_SLOT}),
    PartCategory.STORAGE: frozenset({ConnectorKind.NVME_BAY}),
    PartCategory.PSU: frozenset({ConnectorKind.PSU_BAY}),
    PartCategory.RISER: frozenset({ConnectorKind.GPU_POWER, ConnectorKind.RISER_PORT}),
    PartCategory.NIC: frozenset({ConnectorKind.PCIE_SLOT}),
}


class BuildStepKind(models.TextChoices):
    CHASSIS_PREPARATION = "chassis_preparation", _("Chassis preparation")
    PCIE_TOPOLOGY_CHECK = "pcie_topology_check", _("PCIe topology check")
    CABLE_ROUTING = "cable_routing", _("Cable routing for airflow")
    FIRMWARE = "firmware", _("BIOS / BMC / firmware")
    QC_SIGNOFF = "qc_signoff", _("QC sign-off")
    NOTE = "note", _("Note")
