"""1,000 serial labels on A4 sheets (issue: ≤ 2 s of task time), beside the previous QR encoder in one run.

Figures: the render of 1,000 labels (42 pages) with segno and its fixed mask; the same with segno choosing
the best of its eight masks; the same with reportlab's QR widget, the encoder used before; and the ratio. Only
the render is timed, as the label batch task spends its time there (reading the rows is one query).
"""

from __future__ import annotations

import time
from unittest import mock

import segno
from reportlab.graphics.barcode.qr import QrCodeWidget

from bench.report import record
from inventory import labels as label_module
from inventory.labels import Label, render_labels

COUNT = 1000
TARGET_S = 2.0


def _reportlab_rows(payload: str) -> list[bytes]:
    widget = QrCodeWidget(payload, barLevel="M")
    widget.qr.make()
    return [bytes(1 if dark else 0 for dark in row) for row in widget.qr.modules]


def _segno_best_mask_rows(payload: str) -> tuple[bytearray, ...]:
    return segno.make_qr(payload, error="M", boost_error=False).matrix


def _time(labels: list[Label]) -> tuple[float, int]:
    start = time.perf_counter()
    pdf = render_labels(labels, title="bench")
    return time.perf_counter() - start, len(pdf)


def run() -> None:
    labels = [
        Label(
            serial=f"1324{i:09d}",
            part="NVIDIA RTX PRO 6000 Blackwell 96 GB (RTXPRO6000-BW-96G)",
            lot=f"L-{2291 + i // 250}",
            po="PO-2026-0007",
            extra="DC 2526 · TW",
        )
        for i in range(COUNT)
    ]
    fast, size = _time(labels)
    mask = label_module.QR_MASK
    print(f"{COUNT} labels, segno with mask {mask}: {fast * 1000:7.1f} ms, {size // 1024} KiB")
    with mock.patch.object(label_module, "_qr_rows", _segno_best_mask_rows):
        best, _ = _time(labels)
    print(f"{COUNT} labels, segno scoring all 8 masks: {best * 1000:7.1f} ms")
    with mock.patch.object(label_module, "_qr_rows", _reportlab_rows):
        old, _ = _time(labels)
    print(f"{COUNT} labels, reportlab's QR widget (before): {old * 1000:7.1f} ms")
    record(
        f"{COUNT:,} labels (A4 sheets, segno)",
        fast * 1000,
        "ms",
        target=TARGET_S * 1000,
        note=f"{size // 1024} KiB",
    )
    record(f"{COUNT:,} labels, segno scoring all 8 masks", best * 1000, "ms", note="for the ratio")
    record(f"{COUNT:,} labels, reportlab QR widget (before)", old * 1000, "ms", note="the slow alternative")
    verdict = "pass" if fast <= TARGET_S else "miss"
    print(
        f"ratio reportlab / segno fixed mask: {old / fast:.1f}, segno best mask / fixed: {best / fast:.1f}"
        f"  (target: ≤ {TARGET_S * 1000:,.0f} ms: {verdict})"
    )
