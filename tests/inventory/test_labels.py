"""Serial labels: pages, where the text sits, metadata, and QR codes that decode to their payload."""

from __future__ import annotations

import io
import re

import pytest
import segno
import zxingcpp
from pypdf import PdfReader
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.lib.units import mm

from inventory.labels import (
    LABEL_HEIGHT,
    LABEL_WIDTH,
    QR_MASK,
    QR_MM,
    SAFE_MM,
    Label,
    label_origin,
    parse_qr_payload,
    qr_modules,
    qr_payload,
    render_labels,
)

PART = "NVIDIA RTX PRO 6000 Blackwell 96 GB (RTXPRO6000-BW-96G)"
QR_OPS = re.compile(rb"((?:\d+ \d+ \d+ 1 re\n)+)f")
RECT_OP = re.compile(rb"(\d+) (\d+) (\d+) 1 re")


def make_labels(count: int) -> list[Label]:
    return [
        Label(serial=f"SN-LBL-{i:04d}", part=PART, lot="L-2291", po="PO-2026-0007", extra="DC 2526 · TW")
        for i in range(1, count + 1)
    ]


def decode(size: int, modules: bytes, *, scale: int = 4, quiet: int = 4) -> str | None:
    """Decode a module matrix (one byte per module, 0 = dark) as an image, with zxing-cpp's reader."""
    side = (size + 2 * quiet) * scale
    pixels = bytearray(b"\xff" * side * side)
    for row in range(size):
        line = bytearray()
        for col in range(size):
            line += (b"\x00" if modules[row * size + col] == 0 else b"\xff") * scale
        for dy in range(scale):
            start = ((quiet + row) * scale + dy) * side + quiet * scale
            pixels[start : start + size * scale] = line
    image = memoryview(bytes(pixels)).cast("B", (side, side))
    result = zxingcpp.read_barcode(image, formats=zxingcpp.BarcodeFormat.QRCode)
    return result.text if result else None


def modules_from_ops(ops: bytes) -> tuple[int, bytes]:
    """Rebuild the module matrix of one QR code from the rectangles drawn for it."""
    runs = [tuple(map(int, match)) for match in RECT_OP.findall(ops)]
    size = max(col + width for col, _, width in runs)
    modules = bytearray(b"\xff" * size * size)
    for col, row, width in runs:
        modules[row * size + col : row * size + col + width] = b"\x00" * width
    return size, bytes(modules)


def test_fifty_labels_make_three_pages_with_every_serial_once_on_its_page() -> None:
    labels = make_labels(50)

    reader = PdfReader(io.BytesIO(render_labels(labels)))

    assert len(reader.pages) == 3
    found: dict[str, list[int]] = {}
    for page_number, page in enumerate(reader.pages):
        for serial in re.findall(r"SN-LBL-\d{4}", page.extract_text()):
            found.setdefault(serial, []).append(page_number)
    assert found == {label.serial: [index // 24] for index, label in enumerate(labels)}


def test_page_count_is_ceil_of_n_over_24() -> None:
    for count, pages in [(1, 1), (24, 1), (25, 2), (48, 2), (49, 3)]:
        assert len(PdfReader(io.BytesIO(render_labels(make_labels(count)))).pages) == pages, count


def test_texts_sit_in_their_label_right_of_the_qr_code() -> None:
    labels = make_labels(26)
    reader = PdfReader(io.BytesIO(render_labels(labels)))
    placed: dict[str, tuple[int, float, float]] = {}

    for page_number, page in enumerate(reader.pages):

        def visit(
            text: str, cm: list[float], tm: list[float], font: object, size: float, page=page_number
        ) -> None:
            if text.strip().startswith("SN-LBL-"):
                placed[text.strip()] = (page, tm[4] + cm[4], tm[5] + cm[5])

        page.extract_text(visitor_text=visit)

    assert set(placed) == {label.serial for label in labels}
    for index, label in enumerate(labels):
        page, x, y = label_origin(index)
        text_page, text_x, text_y = placed[label.serial]
        assert text_page == page
        assert x + (SAFE_MM + QR_MM) * mm < text_x < x + LABEL_WIDTH - SAFE_MM * mm
        assert y + LABEL_HEIGHT / 2 < text_y < y + LABEL_HEIGHT - SAFE_MM * mm  # the serial is the top line


def test_sheet_geometry_is_3_by_8_labels_of_70_by_37_mm_centred_on_a4() -> None:
    assert abs(LABEL_WIDTH - 70 * mm) < 1e-9
    assert abs(LABEL_HEIGHT - 37 * mm) < 1e-9
    assert label_origin(0) == (0, pytest.approx(0), pytest.approx((297 - 0.5 - 37) * mm))
    assert label_origin(2) == (0, pytest.approx(140 * mm), pytest.approx((297 - 0.5 - 37) * mm))
    assert label_origin(3) == (0, pytest.approx(0), pytest.approx((297 - 0.5 - 74) * mm))
    assert label_origin(23) == (0, pytest.approx(140 * mm), pytest.approx(0.5 * mm))
    assert label_origin(24) == (1, pytest.approx(0), pytest.approx((297 - 0.5 - 37) * mm))


def test_drawn_qr_codes_decode_to_their_payloads_in_label_order() -> None:
    labels = make_labels(5)
    labels[1] = Label(serial="AB:12/34+56.78_9-X", part="Gehäuse | Spezial 100 %", lot="L|1", po="PO-1")

    page = PdfReader(io.BytesIO(render_labels(labels))).pages[0]
    drawn = QR_OPS.findall(page.get_contents().get_data())

    assert [decode(*modules_from_ops(ops)) for ops in drawn] == [qr_payload(label) for label in labels]


def test_qr_modules_decode_to_the_payload() -> None:
    payload = qr_payload(Label(serial="1324523012345", part=PART, lot="L-2291", po="PO-2026-0007"))

    size, modules = qr_modules(payload)

    assert len(modules) == size * size
    assert 21 <= size <= 57  # version 1 to 10
    assert decode(size, modules) == payload


def reportlab_modules(payload: str) -> tuple[int, bytes]:
    """The previous encoder's matrix (reportlab's QR widget, level M), in the same form as ``qr_modules``."""
    widget = QrCodeWidget(payload, barLevel="M")
    widget.qr.make()
    size = widget.qr.getModuleCount()
    return size, bytes(0 if dark else 255 for row in widget.qr.modules for dark in row)


@pytest.mark.parametrize(
    "label",
    [
        Label(serial="1324523012345", part=PART, lot="L-2291", po="PO-2026-0007"),
        Label(serial="SN-LBL-0001", part="Samsung PM9A3 3.84 TB", lot="L|1:2", po="PO-1\n"),
        Label(serial="AB:12/34+56.78_9-X", part="Gehäuse | Spezial 100 %", lot="L-" + "7" * 40, po="PO-9"),
        Label(serial="x" * 60, part="Supermicro " + "chassis " * 12, lot="LOT", po="PO-2026-0100"),
    ],
)
def test_segno_codes_mean_what_the_previous_encoders_codes_meant(label: Label) -> None:
    payload = qr_payload(label)

    size, modules = qr_modules(payload)
    old_size, old_modules = reportlab_modules(payload)

    # Both are level-M codes of the same payload: a reader gets the same text from each, and the new code is
    # no larger (segno may pick a more compact mode than byte mode; the mask differs, so the modules do too).
    assert decode(size, modules) == decode(old_size, old_modules) == payload
    assert size <= old_size
    code = segno.make_qr(payload, error="M", boost_error=False, mask=QR_MASK)
    assert (code.error, code.mask) == ("M", QR_MASK)


def test_many_serials_of_one_lot_all_decode_with_the_fixed_mask() -> None:
    """The fixed mask is never scored against the data: a reader must still get every code of a batch."""
    payloads = [
        qr_payload(Label(serial=f"1324{i:09d}", part=PART, lot="L-2291", po="PO-2026-0007"))
        for i in range(0, 60_000, 1_000)
    ]

    assert [decode(*qr_modules(payload)) for payload in payloads] == payloads


def test_pdf_header_metadata_and_real_text() -> None:
    pdf = render_labels(make_labels(3), title="Labels PO-2026-0007 lot L-2291")

    assert pdf.startswith(b"%PDF-")
    reader = PdfReader(io.BytesIO(pdf))
    assert reader.metadata is not None
    assert reader.metadata.title == "Labels PO-2026-0007 lot L-2291"
    assert reader.metadata.author == "Werkbank"
    text = reader.pages[0].extract_text()
    for line in ["NVIDIA RTX PRO 6000", "(RTXPRO6000-BW-96G)", "Lot L-2291", "PO-2026-0007", "DC 2526 · TW"]:
        assert text.count(line) == 3, line


def test_default_title() -> None:
    reader = PdfReader(io.BytesIO(render_labels(make_labels(1))))

    assert reader.metadata is not None
    assert reader.metadata.title == "Serial labels"


def test_long_texts_are_cut_with_an_ellipsis() -> None:
    label = Label(
        serial="S" * 64,
        part="Supermicro " + "very long chassis name " * 10,
        lot="LOT-" + "X" * 80,
        po="PO-2026-0007",
        extra="DC 2526 · TW · " + "note " * 30,
    )

    lines = PdfReader(io.BytesIO(render_labels([label]))).pages[0].extract_text().splitlines()

    assert lines[0].startswith("SSSS")
    assert lines[0].endswith("…")
    assert len(lines[0]) < 64
    assert [line.endswith("…") for line in lines] == [True, False, False, True, True, False, True]
    assert lines[5] == "PO-2026-0007"


def test_po_without_prefix_gets_one() -> None:
    text = PdfReader(io.BytesIO(render_labels([Label(serial="SN1", part="X", lot="L1", po="2026-7")])))
    assert "PO 2026-7" in text.pages[0].extract_text()


def test_outline_draws_a_cut_line_per_label() -> None:
    plain = PdfReader(io.BytesIO(render_labels(make_labels(4)))).pages[0].get_contents().get_data()
    outlined = PdfReader(io.BytesIO(render_labels(make_labels(4), outline=True))).pages[0]

    strokes = re.findall(rb" re\s+S", outlined.get_contents().get_data())
    assert len(strokes) == 4
    assert re.findall(rb" re\s+S", plain) == []


def test_no_labels_is_an_error() -> None:
    with pytest.raises(ValueError, match="no labels"):
        render_labels([])


# --- the QR payload ---------------------------------------------------------------------------------


def test_qr_payload_format_uses_the_mpn_from_the_part_text() -> None:
    label = Label(serial="1324523012345", part=PART, lot="L-2291", po="PO-2026-0007", extra="DC 2526 · TW")

    assert qr_payload(label) == "WB1|S:1324523012345|P:RTXPRO6000-BW-96G|L:L-2291|PO:PO-2026-0007"


def test_qr_payload_prefers_an_explicit_mpn_and_falls_back_to_the_part() -> None:
    with_mpn = Label(serial="S1", part="Samsung PM9A3 3.84 TB", lot="L", po="PO-1", mpn="MZQL23T8HCLS-00A07")
    plain = Label(serial="S1", part="Samsung PM9A3 3.84 TB", lot="L", po="PO-1")

    assert qr_payload(with_mpn) == "WB1|S:S1|P:MZQL23T8HCLS-00A07|L:L|PO:PO-1"
    assert qr_payload(plain) == "WB1|S:S1|P:Samsung PM9A3 3.84 TB|L:L|PO:PO-1"


def test_qr_payload_escapes_separators_and_reads_back() -> None:
    label = Label(serial="AB:1/2+3", part="Gehäuse | 100 %", lot="L|1:2", po="PO-1\n")

    payload = qr_payload(label)

    assert payload == "WB1|S:AB:1/2+3|P:Geh%C3%A4use %7C 100 %25|L:L%7C1:2|PO:PO-1%0A"
    assert parse_qr_payload(payload) == {
        "serial": "AB:1/2+3",
        "part": "Gehäuse | 100 %",
        "lot": "L|1:2",
        "po": "PO-1\n",
    }


@pytest.mark.parametrize(
    "payload",
    [
        "1324523012345",
        "WB2|S:1|P:2|L:3|PO:4",
        "WB1|S:1|P:2|L:3",
        "WB1|S:1|P:2|L:3|PO:4|X:5",
        "WB1|S:1|S:2|P:2|L:3|PO:4",
        "WB1|S1|P:2|L:3|PO:4",
    ],
)
def test_parse_qr_payload_rejects_other_codes(payload: str) -> None:
    with pytest.raises(ValueError, match="not a Werkbank label"):
        parse_qr_payload(payload)
