"""The handover pack's documents: the PDF (reportlab platypus), the ZIP with its manifest, and the warranty
certificate of an order. Pure rendering: the data comes from `warranty.selectors.pack_data`, the storing and
the status from `warranty.services.packs`.

The PDF follows issue #12's order: cover (with a QR code of the asset tag), configuration and every serial
by connector, PCIe per GPU, the burn-in summary, temperature and power charts per GPU (downsampled by
burn-in's selector, drawn as vector graphics), every finding with the waived ones and their reasons,
interrupted stages, blacklisted connectors ("never to be used"), rack placement and circuits, network and
BMC addresses (never a secret: the BMC credentials are not decrypted, the pack only says whether they were
handed over), monitoring access (where and under which account, never a password), platform onboarding,
the warranty per serial, and the sign-off. Every page carries "page n of m" and the document revision.

Text is real text in Bitstream Vera (bundled with reportlab, embedded as a subset), which has every glyph
of German (ä ö ü ß) and the units used here (°, ×); the standard PDF fonts would need WinAnsi and cover
less. The strings go through Django's gettext under `translation.override(language)`.

The ZIP holds `handover.pdf`, `telemetry.csv` (every sample of the run, as stored), `probe-report.json`
(the raw report the probe uploaded, uncompressed), `manifest.json`, which lists each of the others with
its SHA-256 and size, and names the issuer, server, revision, language and generation time, and
`manifest.sig.json`, the Ed25519 signature over the manifest's exact bytes (warranty/signing.py), so that
whoever rewrites a file and re-hashes the manifest is caught. `verify_zip` checks a ZIP's files against its
manifest; `check_pack` (behind `manage.py verify-pack` and the public page /verify/) checks the signature
too. Manifests of format 1 come from before packs were signed: they have no signature and say so.

Modules: `frame` (fonts, styles, labels, the numbered page frame), `blocks` (tables, pairs, QR, charts),
the sections in `sections_server`, `sections_burnin`, `sections_site` and `sections_warranty`, `pdf` (the
pack, the certificate and the bench's table, assembled from them) and `archive` (the ZIP, its manifest and
their checks). Import from `warranty.documents`.
"""

from __future__ import annotations

from warranty.documents.archive import (
    CSV_NAME,
    ISSUER,
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    PDF_NAME,
    REPORT_NAME,
    SIGNATURE_NAME,
    PackCheck,
    check_pack,
    pack_zip,
    probe_report_json,
    verify_zip,
)
from warranty.documents.blocks import GridRows
from warranty.documents.pdf import certificate_pdf, pack_pdf, table_pdf

__all__ = [
    "CSV_NAME",
    "ISSUER",
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "MAX_MANIFEST_BYTES",
    "PDF_NAME",
    "REPORT_NAME",
    "SIGNATURE_NAME",
    "GridRows",
    "PackCheck",
    "certificate_pdf",
    "check_pack",
    "pack_pdf",
    "pack_zip",
    "probe_report_json",
    "table_pdf",
    "verify_zip",
]
