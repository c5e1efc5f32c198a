"""The warranty certificate's server column (issue #24, item 7): every row names its server whole, as
poppler's pdftotext reads the page, in English and in German; before, every row read "wb-2026-0001…"."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from warranty.choices import RecordKind
from warranty.documents import certificate_pdf
from warranty.selectors import WarrantyRow

HOSTNAMES = ["wb-2026-0001-01", "wb-2026-0001-02", "vastfleet-sofia-r12-gpu-node-0042"]


class Order:  # the certificate reads only these
    reference = "WB-2026-0001"
    warranty_months = 36

    class customer:
        name = "Vastfleet Rentals GmbH"


def _rows() -> list[WarrantyRow]:
    values = []
    for number, hostname in enumerate(HOSTNAMES, start=1):
        values.append(
            {"kind": RecordKind.SERVER, "serial": f"SMC-C9125-{number:04d}", "description": "Server",
             "hostname": hostname, "server_id": number}
        )  # fmt: skip
        values.append(
            {"kind": RecordKind.COMPONENT, "serial": f"1652024031{number:03d}",
             "description": "NVIDIA GeForce RTX 5090 32 GB", "hostname": hostname, "server_id": number}
        )  # fmt: skip
    start, end = date(2026, 12, 1), date(2029, 12, 1)
    fields = WarrantyRow.__dataclass_fields__
    return [
        WarrantyRow(
            **{name: {**row, "term_months": 36, "start": start, "end": end}.get(name) for name in fields}
        )
        for row in values
    ]


def _pdftotext(content: bytes, folder: Path) -> list[str]:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = folder / "certificate.pdf"
    path.write_bytes(content)
    done = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_row_of_the_certificate_names_its_server_whole(language, tmp_path):
    rows = _rows()
    lines = _pdftotext(certificate_pdf(Order, rows, language=language, issued_on=date(2026, 12, 1)), tmp_path)
    for row in rows:
        [line] = [line for line in lines if row.serial in line]
        assert line.split()[0] == row.hostname, line
    # The cells around it are whole too (the kind, the term, the dates): only the part's name may be cut.
    text = "\n".join(lines)
    assert "…" not in re.sub(r"NVIDIA GeForce[^…\n]*…", "", text), text
    component = "Komponente" if language == "de" else "Component"
    assert text.count(component) == len(HOSTNAMES)
