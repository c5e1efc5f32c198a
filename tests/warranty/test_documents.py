"""The handover pack's PDF and ZIP, and the warranty certificate, rendered from the demo's servers.

pdftoppm (poppler) renders every page, and the page count matches pypdf's; pypdf's text finds every serial,
every blacklisted connector with "never to be used", and the German headings in a `de` pack. The ZIP
verifies with `manage.py verify-pack`, and fails after tampering, with an unknown file, or a missing one.
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, date, datetime

import pytest
from django.core.management import CommandError, call_command

from burnin.models import Finding
from burnin.selectors import telemetry_csv, telemetry_csv_rows
from burnin.services.gate import finding_waive
from tests.warranty.packs_rig import (
    blacklisted_connectors,
    installed_serials,
    load_demo,
    pdf_text,
    pdftoppm_pages,
)
from warranty.choices import RecordKind
from warranty.documents import certificate_pdf, pack_pdf, pack_zip, probe_report_json, verify_zip
from warranty.models import WarrantyRecord
from warranty.selectors import certificate_servers, pack_data, warranty_end, warranty_rows

pytestmark = pytest.mark.django_db

AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the burn-in reports are stored on commit
        return load_demo()


def test_the_pdf_renders_every_page_and_its_text_holds_every_serial_and_blacklisted_connector(demo, tmp_path):
    for server in (demo.fleet, demo.seven_u):
        content = pack_pdf(pack_data(server=server), revision=3, language="en", generated_at=AT)
        pages, text = pdf_text(content)
        folder = tmp_path / server.asset_tag
        folder.mkdir()
        assert pdftoppm_pages(content, folder) == pages > 4
        serials = installed_serials(server)
        assert len(serials) >= 25
        missing = [serial for serial in serials if serial not in text]
        assert not missing, missing
        # Every page: its number of the total, and the revision.
        assert f"revision 3 · page {pages} of {pages}" in text
        assert text.count("revision 3 · page") == pages
    finding = Finding.objects.filter(run__server=demo.seven_u, severity="warn").first()
    finding_waive(finding=finding, actor=demo.pm, reason="Baffle ordered for slot 1")
    _, seven_u = pdf_text(
        pack_pdf(pack_data(server=demo.seven_u), revision=1, language="en", generated_at=AT)
    )
    blacklisted = blacklisted_connectors(demo.seven_u)
    assert len(blacklisted) == 2
    section = seven_u[seven_u.index("Blacklisted connectors") :]
    for name in blacklisted:
        assert name in section
    assert section.count("never to be used") >= 3  # the sentence, and each connector's row
    # The interrupted stage is said plainly, and the waived finding keeps its reason.
    assert "was interrupted and did not finish" in seven_u
    assert "Waived on" in seven_u and "Baffle ordered for slot 1" in seven_u
    assert seven_u.count("Not waived") == Finding.objects.filter(run__server=demo.seven_u).count() - 1


def test_a_german_pack_has_german_headings_and_umlauts(demo):
    _, text = pdf_text(pack_pdf(pack_data(server=demo.seven_u), revision=1, language="de", generated_at=AT))
    for heading in (
        "Übergabepaket",
        "Konfiguration und Seriennummern",
        "PCIe je GPU",
        "Zusammenfassung des Burn-ins",
        "Temperatur und Leistung je GPU",
        "Befunde",
        "Abgebrochene Phasen",
        "Gesperrte Anschlüsse",
        "Rack-Platzierung und Stromkreise",
        "Netzwerk und BMC",
        "Monitoring-Zugang",
        "Plattform-Onboarding",
        "Garantie je Seriennummer",
        "Übergabe",
    ):
        assert heading in text, heading
    assert "niemals zu verwenden" in text
    assert "Seite 1 von" in text and "Handover pack" not in text


def test_a_german_pack_reads_the_findings_in_german(demo):
    """The findings table words each finding from its code and params in the pack's language."""
    _, text = pdf_text(pack_pdf(pack_data(server=demo.seven_u), revision=1, language="de", generated_at=AT))
    findings = text[text.index("Befunde") : text.index("Abgebrochene Phasen")]
    assert "GPU 1 Abstand zur Temperaturgrenze 2 °C bei der Spitze (88 °C)" in findings
    assert "DIMM A1 3 korrigierbare ECC-Fehler im BMC-Ereignisprotokoll" in findings
    assert "korrigierbare ECC-Fehler in derselben Sekunde, dreimal in Abständen von ~4 h" in findings
    assert "Stufe burn abgebrochen: workshop power distribution failure" in findings
    assert "in 92 % der Messwerte" in findings and "in the BMC event log" not in findings
    _, english = pdf_text(
        pack_pdf(pack_data(server=demo.seven_u), revision=1, language="en", generated_at=AT)
    )
    assert "DIMM A1 3 correctable ECC errors in the BMC event log" in english


def test_no_secret_reaches_the_pack(demo):
    from deployment.models import ServerNetwork

    network = ServerNetwork.objects.get(server=demo.fleet)
    assert network.has_bmc_credentials
    _, text = pdf_text(pack_pdf(pack_data(server=demo.fleet), revision=1, language="en", generated_at=AT))
    assert network.bmc_ip in text and network.bmc_mac in text
    assert network.bmc_credentials not in text
    assert "never printed: the customer's members reveal them on the portal's server page" in text
    # Monitoring: where and under which account, never a password.
    assert "vastfleet" in text and "/portal/" in text and "werkbank-demo" not in text


def _zip(demo) -> bytes:
    data = pack_data(server=demo.fleet)
    pdf = pack_pdf(data, revision=1, language="en", generated_at=AT)
    return pack_zip(
        pdf=pdf,
        telemetry_csv=telemetry_csv(run=data.run),
        report=probe_report_json(data.run),
        server=demo.fleet,
        revision=1,
        language="en",
        generated_at=AT,
    )


def _rewrite(content: bytes, *, drop: str = "", replace: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            if name != drop:
                target.writestr(name, (replace or {}).get(name, source.read(name)))
        for name, data in (replace or {}).items():
            if name not in source.namelist():
                target.writestr(name, data)
    return out.getvalue()


def test_the_zip_verifies_and_fails_after_tampering(demo, tmp_path, capsys):
    content = _zip(demo)
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert sorted(archive.namelist()) == [
            "handover.pdf",
            "manifest.json",
            "manifest.sig.json",
            "probe-report.json",
            "telemetry.csv",
        ]
        manifest = json.loads(archive.read("manifest.json"))
        csv = archive.read("telemetry.csv").decode()
        report = json.loads(archive.read("probe-report.json"))
    assert (manifest["server"], manifest["revision"], manifest["language"]) == ("WB-2026-0001-01", 1, "en")
    assert manifest["generated_at"] == AT.isoformat()
    assert [entry["name"] for entry in manifest["files"]] == [
        "handover.pdf",
        "telemetry.csv",
        "probe-report.json",
    ]
    assert csv.splitlines()[0].startswith("gpu_index,at,temp_c")
    assert len(csv.splitlines()) == 1 + demo.fleet.burnin_runs.get(accepted_at__isnull=False).samples.count()
    assert report["schema_version"]

    good = tmp_path / "good.zip"
    good.write_bytes(content)
    call_command("verify-pack", str(good))
    assert "every file matches the manifest" in capsys.readouterr().out

    for name, broken in {
        "tampered": _rewrite(content, replace={"telemetry.csv": csv.replace("0,", "1,", 1).encode()}),
        "missing": _rewrite(content, drop="probe-report.json"),
        "unknown": _rewrite(content, replace={"extra.txt": b"hello"}),
    }.items():
        path = tmp_path / f"{name}.zip"
        path.write_bytes(broken)
        with pytest.raises(CommandError, match="does not verify"):
            call_command("verify-pack", str(path))
        problems = verify_zip(path)
        assert len(problems) == 1, problems
    assert "telemetry.csv: SHA-256" in verify_zip(tmp_path / "tampered.zip")[0]
    assert "missing from the ZIP" in verify_zip(tmp_path / "missing.zip")[0]
    assert "extra.txt: not listed" in verify_zip(tmp_path / "unknown.zip")[0]
    assert verify_zip(io.BytesIO(b"not a zip"))[0].startswith("Not a readable ZIP")


def test_the_database_csv_equals_the_python_csv(demo):
    run = demo.fleet.burnin_runs.get(accepted_at__isnull=False)
    assert telemetry_csv(run=run) == telemetry_csv_rows(run=run)


def test_the_warranty_table_reads_records_once_they_exist_and_derives_them_before(demo):
    order = demo.fleet.order
    before = warranty_rows(servers=[demo.fleet])
    assert before[0].kind == RecordKind.SERVER and before[0].start is None
    assert {row.serial for row in before[1:]} == set(installed_serials(demo.fleet))
    assert all(row.term_months == order.warranty_months for row in before)

    start = date(2026, 12, 1)
    WarrantyRecord.objects.bulk_create(
        WarrantyRecord(
            kind=row.kind,
            server=demo.fleet,
            component=None
            if row.kind == RecordKind.SERVER
            else demo.fleet.installations.get(component__serial=row.serial).component,
            order=order,
            customer=order.customer,
            serial=row.serial,
            description=row.description,
            start_date=start,
            term_months=row.term_months,
            end_date=warranty_end(start, row.term_months),
        )
        for row in before
    )
    after = warranty_rows(servers=[demo.fleet])
    assert [(row.kind, row.serial) for row in after] == [(row.kind, row.serial) for row in before]
    assert {(row.start, row.end) for row in after} == {(start, date(2029, 12, 1))}

    rows = warranty_rows(servers=certificate_servers(order=order))
    _, text = pdf_text(certificate_pdf(order, rows, language="de", issued_on=start))
    assert "Garantiezertifikat" in text and order.reference in text and order.customer.name in text
    assert all(row.serial in text for row in after)
    assert "2029-12-01" in text and "ab Übergabe" in text  # the order's other servers have no records yet


def test_a_long_serial_is_printed_whole_never_cut():
    """A serial wider than its column is condensed, not clipped: the certificate must name it in full."""
    from datetime import date as day

    from warranty.selectors import WarrantyRow

    long_serial = "SN-" + "7" * 37 + "-XYZ"  # 44 characters: far wider than the serial column
    fields = WarrantyRow.__dataclass_fields__
    values = {
        "kind": RecordKind.COMPONENT,
        "serial": long_serial,
        "description": "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition with a long name",
        "term_months": 36,
        "start": day(2026, 12, 1),
        "end": day(2029, 12, 1),
        "hostname": "wb-2026-0001-01",
        "server_id": 1,
    }
    row = WarrantyRow(**{name: values.get(name) for name in fields})

    class Order:  # the certificate reads only these
        reference = "WB-2026-0001"
        warranty_months = 36

        class customer:
            name = "Vastfleet Rentals GmbH"

    _, text = pdf_text(certificate_pdf(Order, [row], language="en", issued_on=day(2026, 12, 1)))
    assert long_serial in text.replace("\n", "")
    assert "…" in text  # the long description is clipped; the serial beside it is not
