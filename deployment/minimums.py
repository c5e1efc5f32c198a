"""A rental platform's host minimums per GPU against a server's own figures: pure rules, no database.

The minimums are a setting (`WERKBANK_PLATFORM_HOST_MINIMUMS`, with the page they come from): for
Vast.ai, per GPU, physical CPU cores, system RAM (GB), disk (GB) and the host-to-device PCIe bandwidth
(GB/s) the slowest GPU reached. A figure meets its minimum when it is at least the minimum (equal is
enough). A figure the server's records do not state is `unknown`: it is shown as such and is not a
shortfall, since nothing says it falls short (`deployment.minimum_selectors` says why it is unknown).
A server without GPUs has nothing to compare per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import formats
from django.utils.translation import gettext as _

#: The figures compared, in the order pages and refusals list them.
FIGURES = ("cpu_cores", "ram_gb", "disk_gb", "pcie_gbps")


@dataclass(frozen=True)
class Minimums:
    """A platform's minimums per GPU."""

    cpu_cores_per_gpu: float
    ram_gb_per_gpu: float
    disk_gb_per_gpu: float
    pcie_gbps_per_gpu: float

    @classmethod
    def from_setting(cls, values: dict[str, Any]) -> Minimums:
        return cls(
            cpu_cores_per_gpu=float(values["cpu_cores_per_gpu"]),
            ram_gb_per_gpu=float(values["ram_gb_per_gpu"]),
            disk_gb_per_gpu=float(values["disk_gb_per_gpu"]),
            pcie_gbps_per_gpu=float(values["pcie_gbps_per_gpu"]),
        )


@dataclass(frozen=True)
class HostFacts:
    """A server's own figures: GPU count, physical CPU cores, RAM (GB), disk (GB), and the slowest GPU's
    host-to-device bandwidth (GB/s). None: not known, with the reason in `unknown[figure]`. `source` says
    where the parts were read from ("installed" or "configuration")."""

    gpu_count: int
    cpu_cores: float | None
    ram_gb: float | None
    disk_gb: float | None
    pcie_gbps: float | None
    source: str = "installed"
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Shortfall:
    """One figure below the platform's minimum, as a sentence with the figures."""

    figure: str
    value: float
    per_gpu: float
    minimum_per_gpu: float
    sentence: str


@dataclass(frozen=True)
class MinimumCheck:
    """One row of the check as a page shows it: the minimum per GPU, the server's figure (total and per
    GPU), and ok (True), short (False) or unknown (None)."""

    figure: str
    label: str
    unit: str
    minimum_per_gpu: float
    value: float | None
    per_gpu: float | None
    ok: bool | None
    sentence: str


def number(value: float) -> str:
    """A figure as the sentences print it, in the active language's format: at most two decimals, none
    for a whole number (12, 0.75, 13.9; German 0,75 and 8.000)."""
    rounded = round(float(value), 2)
    shown: float | int = int(rounded) if rounded == int(rounded) else rounded
    return formats.number_format(shown, use_l10n=True, force_grouping=True)


def _label(figure: str) -> tuple[str, str]:
    return {
        "cpu_cores": (_("CPU cores"), ""),
        "ram_gb": (_("RAM"), "GB"),
        "disk_gb": (_("Disk"), "GB"),
        "pcie_gbps": (_("PCIe bandwidth"), "GB/s"),
    }[figure]


def _sentence(figure: str, *, value: float, per_gpu: float, minimum: float, gpus: int, platform: str) -> str:
    values = {
        "value": number(value),
        "per_gpu": number(per_gpu),
        "minimum": number(minimum),
        "gpus": gpus,
        "platform": platform,
    }
    if figure == "cpu_cores":
        return (
            _(
                "CPU cores %(value)s for %(gpus)s GPUs is %(per_gpu)s physical cores per GPU; %(platform)s "
                "asks for at least %(minimum)s per GPU."
            )
            % values
        )
    if figure == "ram_gb":
        return (
            _(
                "RAM %(value)s GB for %(gpus)s GPUs is %(per_gpu)s GB per GPU; %(platform)s asks for at "
                "least %(minimum)s GB per GPU."
            )
            % values
        )
    if figure == "disk_gb":
        return (
            _(
                "Disk %(value)s GB for %(gpus)s GPUs is %(per_gpu)s GB per GPU; %(platform)s asks for at "
                "least %(minimum)s GB per GPU."
            )
            % values
        )
    return (
        _(
            "PCIe host-to-device bandwidth %(value)s GB/s on the slowest of %(gpus)s GPUs in the accepted "
            "burn-in; %(platform)s asks for at least %(minimum)s GB/s per GPU."
        )
        % values
    )


def host_checks(*, facts: HostFacts, minimums: Minimums, platform: str = "Vast.ai") -> list[MinimumCheck]:
    """Every minimum with the server's figure and whether it holds; empty for a server without GPUs."""
    gpus = facts.gpu_count
    if gpus <= 0:
        return []
    required = {
        "cpu_cores": minimums.cpu_cores_per_gpu,
        "ram_gb": minimums.ram_gb_per_gpu,
        "disk_gb": minimums.disk_gb_per_gpu,
        "pcie_gbps": minimums.pcie_gbps_per_gpu,
    }
    rows = []
    for figure in FIGURES:
        label, unit = _label(figure)
        value: float | None = getattr(facts, figure)
        minimum = required[figure]
        if value is None:
            reason = facts.unknown.get(figure, "")
            rows.append(
                MinimumCheck(
                    figure=figure,
                    label=label,
                    unit=unit,
                    minimum_per_gpu=minimum,
                    value=None,
                    per_gpu=None,
                    ok=None,
                    sentence=(_("%(label)s not known: %(reason)s") % {"label": label, "reason": reason})
                    if reason
                    else _("%(label)s not known.") % {"label": label},
                )
            )
            continue
        # The bandwidth is each GPU's own (the slowest one's); the others are the host's, shared by all.
        per_gpu = value if figure == "pcie_gbps" else value / gpus
        # Compared without the division's rounding: 8 cores for 8 GPUs meet "1 per GPU" exactly.
        ok = value >= minimum if figure == "pcie_gbps" else value >= minimum * gpus
        rows.append(
            MinimumCheck(
                figure=figure,
                label=label,
                unit=unit,
                minimum_per_gpu=minimum,
                value=value,
                per_gpu=per_gpu,
                ok=ok,
                sentence=_sentence(
                    figure, value=value, per_gpu=per_gpu, minimum=minimum, gpus=gpus, platform=platform
                ),
            )
        )
    return rows


def host_shortfalls(*, facts: HostFacts, minimums: Minimums, platform: str = "Vast.ai") -> list[Shortfall]:
    """The figures below the platform's minimums, each as a sentence with the figures, in `FIGURES` order.
    Unknown figures are no shortfall (see the module docstring)."""
    return [
        Shortfall(
            figure=check.figure,
            value=check.value,
            per_gpu=check.per_gpu,
            minimum_per_gpu=check.minimum_per_gpu,
            sentence=check.sentence,
        )
        for check in host_checks(facts=facts, minimums=minimums, platform=platform)
        if check.ok is False and check.value is not None and check.per_gpu is not None
    ]
