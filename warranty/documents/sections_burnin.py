"""The pack's sections about the burn-in: PCIe per GPU, the summary, the charts, every finding (waived ones
with their reasons) and the interrupted stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from reportlab.lib import colors
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, Spacer, Table

from burnin.choices import StageStatus
from burnin.gates import PASSED_BURN_IN
from burnin.hardware import has_serial
from warranty.documents.archive import CSV_NAME
from warranty.documents.blocks import _chart, _pairs, _table
from warranty.documents.frame import FAIL, _date, _esc, _label, _num, _styles
from warranty.selectors import PackData


def _pcie(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("PCIe per GPU")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    rows = []
    for row in data.detail.gpu_rows:
        result = row.result
        rows.append(
            (
                result.index,
                _gpu_name(result),
                row.expected_link,
                row.load_link,
                _num(result.h2d_gbps, 1, "GB/s"),
                _num(result.d2h_gbps, 1, "GB/s"),
            )
        )

    def degraded(_i: int, row: Sequence[Any]) -> colors.Color | None:
        return FAIL if row[2] != row[3] and row[3] != "—" else None

    return [
        *flowables,
        Paragraph(
            _esc(_("Expected link against the link measured under load, with the host-to-device bandwidth.")),
            st.small,
        ),
        *_table(
            [_("GPU"), _("Serial"), _("Expected"), _("Measured"), _("H2D"), _("D2H")],
            rows,
            (12, 44, 28, 28, 31, 31),
            highlight=degraded,
        ),
    ]


def _gpu_name(result: Any) -> str:
    """A GPU by its serial; a card without one (GeForce) is bound by its UUID, and named by it."""
    return result.serial if has_serial(result.serial) else (result.uuid or "—")


def _gate_label(data: PackData) -> str:
    """What the gate decided on the run the pack prints: passed, passed on waivers, or not yet."""
    if data.server.status not in PASSED_BURN_IN:
        return _("Not passed yet")
    if data.detail is not None and any(
        finding.waived for _key, _name, group in data.detail.findings_by_severity for finding in group
    ):
        return _("Passed, with findings waived by a project manager (below, with their reasons)")
    return pgettext("burn-in result", "Passed")


def _burnin(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Burn-in summary")), st.h1)]
    run, detail = data.run, data.detail
    if run is None or detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    results = [row.result for row in detail.gpu_rows]
    hours = ((run.ended_at - run.started_at).total_seconds() / 3600) if run.ended_at else None
    matmuls = sum(r.matmuls or 0 for r in results)
    errors = sum((r.mismatches or 0) + (r.nans or 0) for r in results)
    peaks = [r.peak_temp_c for r in results if r.peak_temp_c is not None]
    margins = [r.min_margin_c for r in results if r.min_margin_c is not None]
    powers = [r.mean_power_w for r in results if r.mean_power_w is not None]
    summary = [
        (_("Run"), f"{_date(run.started_at)} – {_date(run.ended_at)}"),
        (_("Duration"), _num(hours, 1, "h")),
        (
            _("Full load under all GPUs"),
            _num(run.full_load_h, 1, "h") if run.full_load_s is not None else "—",
        ),
        (_("Burn-in promised"), _num(run.target_h, 0, "h") if run.target_s else "—"),
        (_("Result of the analysis"), _label(run.result, run.get_result_display())),
        (_("Burn-in gate"), _gate_label(data)),
        (_("Matmuls checked"), _num(matmuls, 0)),
        (_("Compute errors (mismatches + NaN)"), _num(errors, 0)),
        (_("Peak temperature"), _num(max(peaks), 1, "°C") if peaks else "—"),
        (_("Lowest thermal margin"), _num(min(margins), 1, "°C") if margins else "—"),
        (_("Mean board power, all GPUs"), _num(sum(powers), 0, "W") if powers else "—"),
        (_("Probe"), f"{run.probe_version} · {_('rules')} {run.rules_version}"),
    ]
    rows = [
        (
            r.index,
            _gpu_name(r),
            _num(r.tflops, 1),
            _num(r.vram_gbps, 0),
            _num(r.peak_temp_c, 1),
            _num(r.min_margin_c, 1),
            _num(r.mean_power_w, 0),
            row.errors or "—",
        )
        for row, r in zip(detail.gpu_rows, results, strict=True)
    ]
    return [
        *flowables,
        _pairs(summary, (62, 112)),
        Spacer(1, 3 * mm),
        *_table(
            [
                _("GPU"),
                _("Serial"),
                _("TFLOPS"),
                _("VRAM GB/s"),
                _("Peak °C"),
                _("Margin °C"),
                _("Power W"),
                _("Errors"),
            ],
            rows,
            (11, 41, 19, 21, 19, 20, 19, 24),
        ),
    ]


def _charts(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Temperature and power per GPU")), st.h1)]
    telemetry = data.telemetry
    if telemetry is None or not telemetry.series:
        return [*flowables, Paragraph(_esc(_("No telemetry was recorded.")), st.body)]
    flowables.append(
        Paragraph(
            _esc(
                _(
                    "Means over %(seconds)s s buckets of the run's samples, over the hours since its start; "
                    "every sample is in %(csv)s."
                )
                % {"seconds": _num(telemetry.interval_s, 0), "csv": CSV_NAME}
            ),
            st.small,
        )
    )
    for gpu_index, series in sorted(telemetry.series.items()):
        pair = Table(
            [
                [
                    _chart(
                        series,
                        values=series.temp_c,
                        title=_("GPU %(n)s temperature") % {"n": gpu_index},
                        unit="°C",
                    ),
                    _chart(
                        series, values=series.power_w, title=_("GPU %(n)s power") % {"n": gpu_index}, unit="W"
                    ),
                ]
            ],
            colWidths=[87 * mm, 87 * mm],
        )
        flowables.append(pair)
    return flowables


def _findings(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Findings")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    not_waived = _("Not waived")
    labels = {"fail": _("Fail"), "warn": _("Warning"), "info": _("Info")}
    rows = []
    for key, _name, members in data.detail.findings_by_severity:
        label = labels.get(key, key)
        for finding in members:
            waiver = (
                _("Waived on %(date)s: %(reason)s")
                % {"date": _date(finding.waived_at.date()), "reason": finding.waiver_reason}
                if finding.waived
                else not_waived
            )
            rows.append((label, finding.subject_text, finding.text, waiver))

    def color(_i: int, row: Sequence[Any]) -> colors.Color | None:
        return FAIL if row[3] == not_waived and row[0] == labels["fail"] else None

    return [
        *flowables,
        Paragraph(_esc(_("Every finding of the burn-in analysis, with the waived ones and why.")), st.small),
        *_table(
            [_("Severity"), _("Subject"), _("Finding"), _("Waiver")], rows, (17, 27, 75, 55), highlight=color
        ),
    ]


def _stages(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Interrupted stages")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    incomplete = data.detail.incomplete_stages
    if not incomplete:
        return [*flowables, Paragraph(_esc(_("Every stage of the burn-in ran to its end.")), st.body)]
    for stage in incomplete:
        text = (
            _("The stage “%(name)s” was interrupted and did not finish: %(reason)s")
            if stage.status == StageStatus.INTERRUPTED
            else _("The stage “%(name)s” failed: %(reason)s")
        ) % {"name": stage.name, "reason": stage.reason or _("no reason was recorded")}
        flowables.append(Paragraph(_esc(text), st.body))
    return flowables
