"""Parse and collect the BMC System Event Log (``ipmitool sel elist`` / ``sel list`` / ``-c``).

On firmware-first platforms Linux EDAC reads zero while the BMC logs every correctable DIMM error,
so the SEL is the primary source for host-memory health (burnin.md §0.7).

Line layouts follow ``ipmi_sel_print_std_entry`` in ipmitool ``lib/ipmi_sel.c``::

    %4x | <date> | <time>[ TZ] | <type> <SDR name or #0xNN> | <event>[ (detail)] | Asserted[ | extra]
    %4x |  Pre-Init  |0000001234| <sensor> | <event> | Asserted
    %4x | <date> | <time> | OEM record c1 | <manufacturer id> | <oem data>
    %4x | OEM record e0 | <oem data>
    %4x | Linux kernel panic: <text>

``ipmitool -c`` prints the same fields separated by commas. ipmiutil ``sel -e`` lines
(``003a 12/14/22 23:09:44 MIN EFI  Memory #88  Correctable ECC, DIMM(49) 6f [a0 02 31]``) are accepted too.
"""

from __future__ import annotations

import csv
import re
from datetime import datetime, timedelta
from typing import Any

from probe.common import UTC, iso, run_cmd

#: IPMI sensor type names as ipmitool prints them (``sensor_type_desc`` in ipmi_sel.h); used to split
#: "Power Unit Pwr Unit Status" into the type "Power Unit" and the SDR name "Pwr Unit Status".
SENSOR_TYPES = (
    "Temperature",
    "Voltage",
    "Current",
    "Fan",
    "Physical Security",
    "Platform Security",
    "Processor",
    "Power Supply",
    "Power Unit",
    "Cooling Device",
    "Other",
    "Memory",
    "Drive Slot / Bay",
    "POST Memory Resize",
    "System Firmwares",
    "System Firmware Progress",
    "Event Logging Disabled",
    "Watchdog1",
    "Watchdog 1",
    "System Event",
    "Critical Interrupt",
    "Button",
    "Module / Board",
    "Microcontroller",
    "Add-in Card",
    "Chassis",
    "Chip Set",
    "Other FRU",
    "Cable / Interconnect",
    "Terminator",
    "System Boot Initiated",
    "Boot Error",
    "OS Boot",
    "OS Critical Stop",
    "Slot / Connector",
    "System ACPI Power State",
    "Watchdog2",
    "Watchdog 2",
    "Platform Alert",
    "Entity Presence",
    "Monitor ASIC",
    "LAN",
    "Management Subsys Health",
    "Management Subsystem Health",
    "Battery",
    "Session Audit",
    "Version Change",
    "FRU State",
)
_SENSOR_TYPES_LONGEST_FIRST = sorted(SENSOR_TYPES, key=len, reverse=True)

#: Memory sensor-specific offsets 0x00–0x0a (ipmi_sel.h), matched on the event text; order matters
#: because "Correctable ECC logging limit reached" starts with "Correctable ECC".
MEMORY_KINDS = (
    ("correctable ecc logging limit reached", "ce_logging_limit"),
    ("correctable ecc", "ce"),
    ("uncorrectable ecc", "ue"),
    ("parity", "parity"),
    ("memory scrub failed", "scrub_failed"),
    ("memory device disabled", "device_disabled"),
    ("presence detected", "presence_detected"),
    ("configuration error", "configuration_error"),
    ("spare", "spare"),
    ("throttled", "throttled"),
    ("critical overtemperature", "critical_overtemperature"),
)

#: Time-zone abbreviations ipmitool appends (it prints the host's local zone). Ambiguous ones (IST, CST
#: in Asia) are interpreted in their most common datacenter meaning; unknown ones leave ``ts_utc`` null.
TZ_OFFSETS_H = {
    "UTC": 0,
    "GMT": 0,
    "Z": 0,
    "WET": 0,
    "WEST": 1,
    "BST": 1,
    "CET": 1,
    "CEST": 2,
    "MET": 1,
    "MEST": 2,
    "EET": 2,
    "EEST": 3,
    "MSK": 3,
    "IST": 5.5,
    "CST": -6,
    "CDT": -5,
    "EST": -5,
    "EDT": -4,
    "MST": -7,
    "MDT": -6,
    "PST": -8,
    "PDT": -7,
    "AKST": -9,
    "AKDT": -8,
    "HST": -10,
    "JST": 9,
    "KST": 9,
    "SGT": 8,
    "HKT": 8,
    "AEST": 10,
    "AEDT": 11,
    "NZST": 12,
    "NZDT": 13,
}

_DATE_RE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
_TIME_RE = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})(?:\s+([A-Za-z]{1,5}|[+-]\d{2}:?\d{2}))?$")
_ID_RE = re.compile(r"^[0-9a-fA-F]{1,8}$")
_OEM_RE = re.compile(r"^OEM record ([0-9a-fA-F]{2})$")
_IPMIUTIL_RE = re.compile(
    r"^(?P<id>[0-9a-fA-F]{4}) (?P<date>\d{2}/\d{2}/\d{2,4}) (?P<time>\d{2}:\d{2}:\d{2}) "
    r"(?P<sev>[A-Z]{3}) (?P<src>\S+)\s+(?P<rest>.*)$"
)
_IPMIUTIL_REST_RE = re.compile(
    r"^(?P<sensor>.+?#[0-9a-fA-F]+)\s+(?P<event>.*?)"
    r"(?:\s+(?P<evtype>[0-9a-fA-F]{2})\s+\[(?P<raw>[0-9a-fA-F ]+)\])?$"
)
_DETAIL_RE = re.compile(r"^(?P<event>.*?)\s*\((?P<detail>[^()]*)\)\s*$")
_SMC_DIMM_RE = re.compile(r"^(?P<event>.*?)\s*(?P<detail>@DIMM\w+\(CPU\d+\))\s*$")
_CPU_DIMM_RE = re.compile(r"^CPU\s*(\d+)\s+DIMM\s*(\w+)$", re.IGNORECASE)
_AT_DIMM_RE = re.compile(r"^@DIMM(\w+)\(CPU(\d+)\)$", re.IGNORECASE)


def _parse_date(date: str) -> tuple[int, int, int] | None:
    match = _DATE_RE.match(date.strip())
    if not match:
        return None
    month, day, year = int(match.group(1)), int(match.group(2)), int(match.group(3))
    if len(match.group(3)) == 2:
        # ipmitool 1.8.19 prints %x (C locale: 2-digit year). IPMI timestamps start in 1970.
        year += 2000 if year < 70 else 1900
    return year, month, day


def _tz_offset(tz: str | None) -> float | None:
    if tz is None:
        return None
    if tz[0] in "+-":
        digits = tz[1:].replace(":", "")
        hours = int(digits[:2]) + int(digits[2:]) / 60
        return hours if tz[0] == "+" else -hours
    return TZ_OFFSETS_H.get(tz.upper())


def parse_timestamp(date: str, time: str) -> dict[str, Any]:
    """Turn ipmitool's date and time columns into ``ts_bmc`` (as printed), ``tz`` and ``ts_utc``."""
    ymd = _parse_date(date)
    tmatch = _TIME_RE.match(time.strip())
    if ymd is None or tmatch is None:
        return {"ts_bmc": None, "tz": None, "ts_utc": None}
    try:
        # Naive on purpose: this is the BMC's wall clock as printed; the zone (if any) is applied below.
        local = datetime(*ymd, int(tmatch.group(1)), int(tmatch.group(2)), int(tmatch.group(3)))  # noqa: DTZ001
    except ValueError:
        return {"ts_bmc": None, "tz": None, "ts_utc": None}
    tz = tmatch.group(4)
    offset = _tz_offset(tz)
    ts_utc = None
    if offset is not None:
        ts_utc = iso((local - timedelta(hours=offset)).replace(tzinfo=UTC))
    return {"ts_bmc": local.strftime("%Y-%m-%dT%H:%M:%S"), "tz": tz, "ts_utc": ts_utc}


def split_sensor(sensor: str) -> tuple[str | None, str]:
    """Split ``"Memory #0x88"`` or ``"Power Unit Pwr Unit Status"`` into (sensor type, name)."""
    for stype in _SENSOR_TYPES_LONGEST_FIRST:
        if sensor == stype:
            return stype, ""
        if sensor.startswith(stype + " "):
            return stype, sensor[len(stype) + 1 :].strip()
    return None, sensor


def normalise_dimm(detail: str | None) -> str | None:
    """Canonical DIMM key.

    ``CPU0_G1`` stays, ``@DIMMA1(CPU1)`` becomes ``CPU1_DIMMA1`` and ``CPU 0 DIMM 8`` becomes ``CPU0_DIMM8``.

    The label is what the BMC or ipmitool printed; ipmitool's OEM decoding is known to be wrong on some
    boards (burnin.md rule 19), so the server should treat it as a hint.
    """
    if not detail:
        return None
    text = detail.strip()
    match = _AT_DIMM_RE.match(text)
    if match:
        return f"CPU{match.group(2)}_DIMM{match.group(1).upper()}"
    match = _CPU_DIMM_RE.match(text)
    if match:
        return f"CPU{match.group(1)}_DIMM{match.group(2).upper()}"
    return text or None


def memory_kind(event: str | None) -> str | None:
    """Classify a memory event text (``Correctable ECC`` → ``ce`` …); unknown texts give ``other``."""
    low = (event or "").lower()
    for prefix, kind in MEMORY_KINDS:
        if low.startswith(prefix):
            return kind
    return "other"


def _event(line: str, fmt: str, record_id: str) -> dict[str, Any]:
    return {
        "id": f"0x{int(record_id, 16):x}",
        "record_type": "system",
        "format": fmt,
        "ts_bmc": None,
        "tz": None,
        "ts_utc": None,
        "pre_init": False,
        "bmc_uptime_s": None,
        "sensor_type": None,
        "sensor": None,
        "event": None,
        "detail": None,
        "dir": None,
        "extra": [],
        "dimm": None,
        "memory_kind": None,
        "raw": None,
        "oem": None,
        "line": line.rstrip("\n"),
    }


def _fill_event_fields(ev: dict[str, Any], fields: list[str]) -> None:
    """Fill sensor / event / direction / extra from the columns that follow the timestamp."""
    if not fields:
        return
    sensor = fields[0]
    stype, _name = split_sensor(sensor)
    ev["sensor_type"] = stype
    ev["sensor"] = sensor
    event = fields[1] if len(fields) > 1 else None
    rest = fields[2:]
    detail = None
    if event:
        match = _SMC_DIMM_RE.match(event) or _DETAIL_RE.match(event)
        if match:
            event, detail = match.group("event").strip(), match.group("detail").strip() or None
    ev["event"] = event
    if rest and rest[0] in ("Asserted", "Deasserted"):
        ev["dir"] = rest[0]
        rest = rest[1:]
    ev["extra"] = rest
    if stype == "Memory" or sensor.startswith("Memory"):
        ev["memory_kind"] = memory_kind(event)
        cpu_dimm = next((x for x in rest if _CPU_DIMM_RE.match(x)), None)
        ev["detail"] = detail or cpu_dimm
        ev["dimm"] = normalise_dimm(detail or cpu_dimm)
    else:
        ev["detail"] = detail


def parse_fields(fields: list[str], line: str, fmt: str) -> dict[str, Any] | None:
    """Interpret the columns of one pipe- or comma-separated ipmitool SEL line."""
    fields = [f.strip() for f in fields]
    if not fields or not _ID_RE.match(fields[0]):
        return None
    ev = _event(line, fmt, fields[0])
    rest = fields[1:]
    # CSV prints empty date/time columns for non-timestamped records; drop them.
    while rest and rest[0] == "" and len(rest) > 1:
        rest = rest[1:]
    if not rest:
        return None
    if rest[0].startswith("Linux kernel panic"):
        ev["record_type"] = "kernel_panic"
        ev["event"] = ",".join(rest).split(":", 1)[1].strip() if ":" in rest[0] else None
        return ev
    oem = _OEM_RE.match(rest[0])
    if oem:  # OEM non-timestamped (0xe0–0xff): no date/time columns
        ev["record_type"] = "oem_non_timestamped"
        ev["oem"] = {
            "record_type": oem.group(1).lower(),
            "manufacturer_id": None,
            "data": rest[1] if len(rest) > 1 else None,
            "text": " | ".join(rest[2:]) or None,
        }
        return ev
    if len(rest) < 3:
        return None
    if rest[0] == "Pre-Init":
        # The BMC logged this before its clock was set: the value is seconds since BMC init.
        ev["pre_init"] = True
        ev["bmc_uptime_s"] = int(rest[1]) if rest[1].isdigit() else None
    else:
        ev.update(parse_timestamp(rest[0], rest[1]))
        if ev["ts_bmc"] is None:
            return None
    after = rest[2:]
    oem = _OEM_RE.match(after[0]) if after else None
    if oem:  # OEM timestamped (0xc0–0xdf)
        ev["record_type"] = "oem_timestamped"
        ev["oem"] = {
            "record_type": oem.group(1).lower(),
            "manufacturer_id": after[1] if len(after) > 1 else None,
            "data": after[2] if len(after) > 2 else None,
            "text": " | ".join(after[3:]) or None,
        }
        return ev
    _fill_event_fields(ev, after)
    return ev


def parse_ipmiutil_line(line: str) -> dict[str, Any] | None:
    """Parse one ipmiutil ``sel -e`` line (fixed-width, space-separated)."""
    match = _IPMIUTIL_RE.match(line.strip())
    if not match:
        return None
    ev = _event(line, "ipmiutil", match.group("id"))
    ev.update(parse_timestamp(match.group("date"), match.group("time")))
    rest = _IPMIUTIL_REST_RE.match(match.group("rest").strip())
    if not rest:
        ev["event"] = match.group("rest").strip()
        return ev
    sensor = rest.group("sensor").strip()
    event = rest.group("event").strip()
    detail = None
    if ", " in event:
        event, detail = (part.strip() for part in event.split(", ", 1))
    stype, _name = split_sensor(sensor)
    ev.update(
        {
            "sensor_type": stype,
            "sensor": sensor,
            "event": event,
            "detail": detail,
            "raw": rest.group("raw").strip() if rest.group("raw") else None,
            "extra": [f"severity={match.group('sev')}", f"source={match.group('src')}"],
        }
    )
    if stype == "Memory":
        ev["memory_kind"] = memory_kind(event)
        ev["dimm"] = normalise_dimm(detail)
    return ev


def parse_line(line: str) -> dict[str, Any] | None:
    """Parse a single SEL line in any supported format; None when it is not an event line."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if "|" in text:
        return parse_fields(text.split("|"), line, "pipe")
    if re.match(r"^[0-9a-fA-F]{1,8},", text):
        return parse_fields(next(csv.reader([text])), line, "csv")
    return parse_ipmiutil_line(text)


def parse_sel(text: str) -> dict[str, Any]:
    """Parse a whole SEL dump. Blank and ``#`` comment lines are ignored; other unparsable lines are
    returned in ``unparsed`` so nothing is dropped silently."""
    events: list[dict[str, Any]] = []
    unparsed: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        ev = parse_line(line)
        if ev is None:
            unparsed.append(line)
        else:
            events.append(ev)
    return {"events": events, "unparsed": unparsed}


def event_key(ev: dict[str, Any]) -> tuple[Any, ...]:
    """Identity of an event across repeated reads; IDs alone are reused after a SEL clear."""
    return (ev["id"], ev["ts_bmc"], ev["bmc_uptime_s"], ev["sensor"], ev["event"], ev["dir"])


def parse_sel_info(text: str) -> dict[str, Any]:
    """Extract entry count and overflow flag from ``ipmitool sel info``."""
    info: dict[str, Any] = {"entries": None, "overflow": None}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "entries" and value.isdigit():
            info["entries"] = int(value)
        elif key == "overflow":
            info["overflow"] = value.lower() == "true"
    return info


def parse_sel_time(text: str) -> datetime | None:
    """Parse ``ipmitool sel time get`` (``MM/DD/YYYY HH:MM:SS[ TZ]``) into an aware UTC datetime.

    Without a zone suffix the value is taken as host local time, which is how ipmitool prints it.
    """
    parts = text.strip().split(None, 1)
    if len(parts) != 2:
        return None
    stamp = parse_timestamp(parts[0], parts[1])
    if stamp["ts_utc"]:
        return datetime.strptime(stamp["ts_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    if stamp["ts_bmc"]:
        naive = datetime.strptime(stamp["ts_bmc"], "%Y-%m-%dT%H:%M:%S")  # noqa: DTZ007 - host local time
        return naive.astimezone().astimezone(UTC)
    return None


def read_sel(timeout: float = 120.0) -> dict[str, Any]:
    """Run ``ipmitool sel elist`` (plus ``sel info``); return raw text, parsed events and any error."""
    elist = run_cmd(["ipmitool", "sel", "elist"], timeout=timeout)
    out: dict[str, Any] = {
        "ok": elist.ok,
        "error": elist.error,
        "text": elist.stdout if elist.ok else None,
        "events": [],
        "unparsed": [],
        "info": {"entries": None, "overflow": None},
    }
    if elist.ok:
        parsed = parse_sel(elist.stdout)
        out["events"], out["unparsed"] = parsed["events"], parsed["unparsed"]
        info = run_cmd(["ipmitool", "sel", "info"], timeout=timeout)
        if info.ok:
            out["info"] = parse_sel_info(info.stdout)
    return out
