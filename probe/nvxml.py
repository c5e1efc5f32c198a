"""Normalise ``nvidia-smi -q -x`` XML from every driver generation into plain JSON-able dicts.

Driver generations differ in tag names (see ``docs/reference/burnin.md`` §0.5 and §3):

* v11/v12 (515/525): ``clocks_throttle_reasons``, ``power_readings/power_draw``, ``enforced_power_limit``;
* 535+: ``clocks_event_reasons``, ``gpu_power_readings/power_draw``, ``current_power_limit``;
* v13 (580/590): ``average_power_draw``/``instant_power_draw``, ``clocks_event_reasons_counters`` and
  T.Limit-relative threshold *offsets* instead of absolute thresholds.

``N/A``, any bracketed value (``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``) and
"Requested functionality has been deprecated" read as ``None``; units are stripped into numbers.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from probe.common import run_cmd

_NULL_TEXTS = {
    "",
    "n/a",
    "not supported",
    "requested functionality has been deprecated",
    "none",
    "unknown error",
}
_NUMBER_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*(?:[A-Za-z%/()]+(?:[/ ][A-Za-z()]+)*)?$")
_DOCTYPE_RE = re.compile(r'<!DOCTYPE\s+nvidia_smi_log\s+SYSTEM\s+"([^"]+)"')

#: Names of the clocks-event reasons in XML order; the query-gpu bitmask uses the same meaning.
CLOCK_EVENT_BITS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}

#: Counter names as they appear after ``clocks_event_reasons_counters_`` in v13 XML.
CLOCK_EVENT_COUNTERS = (
    "sw_power_cap",
    "sync_boost",
    "sw_therm_slowdown",
    "hw_therm_slowdown",
    "hw_power_brake",
)


def mask_to_reasons(mask: int | None) -> list[str]:
    """Translate a clocks-event bitmask (``clocks_event_reasons.active``) into reason names."""
    if mask is None:
        return []
    return [name for bit, name in CLOCK_EVENT_BITS.items() if mask & bit]


def clean(text: str | None) -> str | None:
    """Return stripped text, or None for the many ways nvidia-smi spells "no value"."""
    if text is None:
        return None
    value = " ".join(text.split())
    if value.lower() in _NULL_TEXTS or (value.startswith("[") and value.endswith("]")):
        return None
    return value


def number(text: str | None) -> int | float | None:
    """Parse ``"79.06 W"``, ``"16x"``, ``"-8 C"``, ``"0 us"`` or ``"3072 bank(s)"`` into a number."""
    value = clean(text)
    if value is None:
        return None
    match = _NUMBER_RE.match(value)
    if not match:
        return None
    raw = match.group(1)
    return float(raw) if "." in raw else int(raw)


def integer(text: str | None) -> int | None:
    """Like :func:`number` but only integral values (counters, link gen/width)."""
    value = number(text)
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return value


def yes_no(text: str | None) -> bool | None:
    """Map ``Yes``/``No`` (and ``Active``/``Not Active``) to booleans."""
    value = clean(text)
    if value is None:
        return None
    low = value.lower()
    if low in ("yes", "active", "enabled", "true"):
        return True
    if low in ("no", "not active", "disabled", "false"):
        return False
    return None


def _text(node: ET.Element | None, path: str) -> str | None:
    if node is None:
        return None
    found = node.find(path)
    return found.text if found is not None else None


def _first(node: ET.Element, *paths: str) -> str | None:
    """Text of the first path that exists and is not a null spelling (tag aliases across drivers)."""
    for path in paths:
        value = _text(node, path)
        if clean(value) is not None:
            return value
    return None


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _ecc_block(block: ET.Element | None) -> dict[str, int | None]:
    """Sum one ``ecc_errors/volatile`` or ``…/aggregate`` block, whatever generation wrote it."""
    if block is None:
        return {"corrected": None, "uncorrected": None, "dram_corrected": None, "dram_uncorrected": None}
    # v11 (pre-Ampere) nests single_bit/double_bit with a total each.
    single_total = integer(_text(block, "single_bit/total"))
    double_total = integer(_text(block, "double_bit/total"))
    dram_corr = integer(_text(block, "dram_correctable"))
    dram_unc = integer(_text(block, "dram_uncorrectable"))
    sram_corr = integer(_text(block, "sram_correctable"))
    # v12 has sram_uncorrectable; v13 splits it into parity and SEC-DED parts.
    sram_unc = integer(_text(block, "sram_uncorrectable"))
    if sram_unc is None:
        sram_unc = _sum(
            integer(_text(block, "sram_uncorrectable_parity")),
            integer(_text(block, "sram_uncorrectable_secded")),
        )
    corrected = _sum(sram_corr, dram_corr) if single_total is None else single_total
    uncorrected = _sum(sram_unc, dram_unc) if double_total is None else double_total
    if dram_corr is None and single_total is not None:
        dram_corr = integer(_text(block, "single_bit/device_memory"))
    if dram_unc is None and double_total is not None:
        dram_unc = integer(_text(block, "double_bit/device_memory"))
    return {
        "corrected": corrected,
        "uncorrected": uncorrected,
        "dram_corrected": dram_corr,
        "dram_uncorrected": dram_unc,
    }


def _clock_reasons(gpu: ET.Element) -> list[str]:
    block = gpu.find("clocks_event_reasons")
    prefix = "clocks_event_reason_"
    if block is None:
        block = gpu.find("clocks_throttle_reasons")
        prefix = "clocks_throttle_reason_"
    if block is None:
        return []
    active = []
    for child in block:
        if child.tag.startswith(prefix) and yes_no(child.text) is True:
            active.append(child.tag[len(prefix) :])
    return active


def _clock_counters(gpu: ET.Element) -> dict[str, int | None] | None:
    block = gpu.find("clocks_event_reasons_counters")
    if block is None:
        return None
    return {
        name: integer(_text(block, f"clocks_event_reasons_counters_{name}")) for name in CLOCK_EVENT_COUNTERS
    }


def parse_gpu(gpu: ET.Element, index: int) -> dict[str, Any]:
    """Normalise one ``<gpu>`` element. ``index`` is its position, which is nvidia-smi's GPU index."""
    link = "pci/pci_gpu_link_info"
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")
    temp = gpu.find("temperature")
    vol = _ecc_block(gpu.find("ecc_errors/volatile"))
    agg = _ecc_block(gpu.find("ecc_errors/aggregate"))
    remap = gpu.find("remapped_rows")
    power_w = _first(power, "average_power_draw", "power_draw") if power is not None else None
    power_limit = (
        _first(power, "current_power_limit", "enforced_power_limit", "power_limit")
        if power is not None
        else None
    )
    return {
        "index": index,
        "minor_number": integer(_text(gpu, "minor_number")),
        "name": clean(_text(gpu, "product_name")),
        "brand": clean(_text(gpu, "product_brand")),
        "architecture": clean(_text(gpu, "product_architecture")),
        "serial": clean(_text(gpu, "serial")),
        "uuid": clean(_text(gpu, "uuid")),
        "pci_bus_id": clean(_text(gpu, "pci/pci_bus_id")) or clean(gpu.get("id")),
        "pci_device_id": clean(_text(gpu, "pci/pci_device_id")),
        "vbios_version": clean(_text(gpu, "vbios_version")),
        "persistence_mode": clean(_text(gpu, "persistence_mode")),
        "pstate": clean(_text(gpu, "performance_state")),
        "fan_pct": number(_text(gpu, "fan_speed")),
        "pcie": {
            "current_gen": integer(_text(gpu, f"{link}/pcie_gen/current_link_gen")),
            "current_width": integer(_text(gpu, f"{link}/link_widths/current_link_width")),
            "max_gen": integer(_text(gpu, f"{link}/pcie_gen/max_link_gen")),
            "max_width": integer(_text(gpu, f"{link}/link_widths/max_link_width")),
            "device_max_gen": integer(_text(gpu, f"{link}/pcie_gen/max_device_link_gen")),
            "host_max_gen": integer(_text(gpu, f"{link}/pcie_gen/max_host_link_gen")),
            "device_current_gen": integer(_text(gpu, f"{link}/pcie_gen/device_current_link_gen")),
            "replay_counter": integer(_text(gpu, "pci/replay_counter")),
            "replay_rollover_counter": integer(_text(gpu, "pci/replay_rollover_counter")),
        },
        "temp_c": number(_text(temp, "gpu_temp")),
        "tlimit_c": number(_text(temp, "gpu_temp_tlimit")),
        # Ada/Hopper-on-580 and later give signed offsets relative to T.Limit ...
        "shutdown_offset_c": number(_text(temp, "gpu_temp_max_tlimit_threshold")),
        "slowdown_offset_c": number(_text(temp, "gpu_temp_slow_tlimit_threshold")),
        "max_op_offset_c": number(_text(temp, "gpu_temp_max_gpu_tlimit_threshold")),
        "mem_max_offset_c": number(_text(temp, "gpu_temp_max_mem_tlimit_threshold")),
        # ... older drivers give absolute temperatures. Both are kept; the server picks what exists.
        "shutdown_temp_c": number(_text(temp, "gpu_temp_max_threshold")),
        "slowdown_temp_c": number(_text(temp, "gpu_temp_slow_threshold")),
        "max_op_temp_c": number(_text(temp, "gpu_temp_max_gpu_threshold")),
        "mem_max_temp_c": number(_text(temp, "gpu_temp_max_mem_threshold")),
        "target_temp_c": number(_text(temp, "gpu_target_temperature")),
        "mem_temp_c": number(_text(temp, "memory_temp")),
        "power_w": number(power_w),
        "power_instant_w": number(_text(power, "instant_power_draw")),
        "power_limit_w": number(power_limit),
        "power_default_limit_w": number(_text(power, "default_power_limit")),
        "power_max_limit_w": number(_text(power, "max_power_limit")),
        "sm_mhz": number(_text(gpu, "clocks/sm_clock")),
        "sm_max_mhz": number(_text(gpu, "max_clocks/sm_clock")),
        "mem_mhz": number(_text(gpu, "clocks/mem_clock")),
        "mem_max_mhz": number(_text(gpu, "max_clocks/mem_clock")),
        "util_pct": number(_text(gpu, "utilization/gpu_util")),
        "fb_total_mib": number(_text(gpu, "fb_memory_usage/total")),
        "fb_used_mib": number(_text(gpu, "fb_memory_usage/used")),
        "clocks_event_reasons_active": _clock_reasons(gpu),
        "clocks_event_reasons_counters_us": _clock_counters(gpu),
        "ecc_mode": clean(_text(gpu, "ecc_mode/current_ecc")),
        "ecc_pending_mode": clean(_text(gpu, "ecc_mode/pending_ecc")),
        "ecc_volatile_corrected": vol["corrected"],
        "ecc_volatile_uncorrected": vol["uncorrected"],
        "ecc_volatile_dram_corrected": vol["dram_corrected"],
        "ecc_volatile_dram_uncorrected": vol["dram_uncorrected"],
        "ecc_aggregate_corrected": agg["corrected"],
        "ecc_aggregate_uncorrected": agg["uncorrected"],
        # remapped_rows is the literal text "N/A" on GPUs without row remapping (A100 under MIG, GeForce).
        "remapped_rows_corrected": integer(_text(remap, "remapped_row_corr")),
        "remapped_rows_uncorrected": integer(_text(remap, "remapped_row_unc")),
        "remapped_rows_pending": yes_no(_text(remap, "remapped_row_pending")),
        "remapped_rows_failure": yes_no(_text(remap, "remapped_row_failure")),
        "retired_pages_pending": yes_no(_text(gpu, "retired_pages/pending_retirement")),
    }


def parse_xml(text: str) -> dict[str, Any]:
    """Parse a whole ``nvidia-smi -q -x`` document.

    Raises ValueError when the text is not an ``nvidia_smi_log`` document.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from exc
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"root element is <{root.tag}>, expected <nvidia_smi_log>")
    doctype = _DOCTYPE_RE.search(text[:2000])
    return {
        "timestamp": clean(_text(root, "timestamp")),
        "driver_version": clean(_text(root, "driver_version")),
        "cuda_version": clean(_text(root, "cuda_version")),
        "dtd": doctype.group(1) if doctype else None,
        "attached_gpus": integer(_text(root, "attached_gpus")),
        "gpus": [parse_gpu(gpu, i) for i, gpu in enumerate(root.findall("gpu"))],
    }


def query_xml(timeout: float = 120.0) -> tuple[str | None, str | None]:
    """Run ``nvidia-smi -q -x``; return ``(xml_text, error)``."""
    result = run_cmd(["nvidia-smi", "-q", "-x"], timeout=timeout)
    if not result.ok:
        return None, result.error
    return result.stdout, None
