"""CSV import of parts and suppliers in the admin (issue #24, item 6): a preview first, a refused row with its
line number and the rule it broke, nothing written until the PM confirms, and then every row through the
catalogue services, with their audit rows, all or nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from inventory.models import Part, Supplier
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PARTS = "/admin/inventory/part/"
SUPPLIERS = "/admin/inventory/supplier/"

HEADER = (
    "category,manufacturer,mpn,name,vram_gb,tdp_w,pcie_gen,pcie_lanes,u_height,list_price,preferred_supplier"
)
GOOD = [
    "gpu,NVIDIA,RTX5090-IMPORT,GeForce RTX 5090 32 GB,32,575,5,16,,2399.00,EuroGPU Distribution GmbH",
    "cpu,AMD,100-000001463,EPYC 9555 64 cores,,360,5,,,4100.00,",
]
# A CPU with VRAM: part_create's rule "only a GPU has VRAM" refuses it.
BAD = "cpu,AMD,100-000000789,EPYC 9175F,16,320,5,,,3900.00,"


def _csv(*lines: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("parts.csv", ("\n".join(lines) + "\n").encode(), content_type="text/csv")


def _preview(client: Client, url: str, upload: SimpleUploadedFile) -> Any:
    response = client.post(f"{url}import/", {"format": 0, "resource": 0, "import_file": upload})
    assert response.status_code == 200
    return response


def _confirm(client: Client, url: str, preview: Any) -> Any:
    return client.post(f"{url}process_import/", preview.context["confirm_form"].initial)


@pytest.fixture
def pm(tenants: Any) -> Client:
    factories.SupplierFactory()  # EuroGPU Distribution GmbH, which the GPU's row names
    client = Client()
    client.force_login(tenants.pm)
    client.pm = tenants.pm
    return client


def test_the_change_lists_offer_import_and_export(pm):
    for url in (PARTS, SUPPLIERS):
        html = pm.get(url).content.decode()
        assert f"{url}import/" in html and f"{url}export/" in html


def test_the_preview_shows_every_row_and_writes_nothing(pm):
    before = (Part.objects.count(), AuditEvent.objects.count())
    response = _preview(pm, PARTS, _csv(HEADER, *GOOD))
    result = response.context["result"]
    assert not result.has_errors() and not result.has_validation_errors()
    assert [row.import_type for row in result.valid_rows()] == ["new", "new"]
    html = response.content.decode()
    assert "RTX5090-IMPORT" in html and "EPYC 9555 64 cores" in html
    assert "Confirm import" in html and "Nothing has been written yet." in html
    assert (Part.objects.count(), AuditEvent.objects.count()) == before


def test_a_bad_row_is_refused_with_its_line_and_rule_and_nothing_is_offered_or_written(pm):
    before = (Part.objects.count(), AuditEvent.objects.count())
    response = _preview(pm, PARTS, _csv(HEADER, GOOD[0], BAD, GOOD[1]))
    result = response.context["result"]
    assert result.has_validation_errors()
    (invalid,) = result.invalid_rows
    assert invalid.number == 2 and invalid.error_dict == {"vram_gb": ["only a GPU has VRAM."]}
    html = response.content.decode()
    assert "Rows refused: nothing can be imported" in html
    assert '<td class="import-line">3</td>' in html  # the file's line 3: the header is line 1
    assert "only a GPU has VRAM." in html
    assert "confirm_form" not in response.context or response.context["confirm_form"] is None
    assert "Confirm import" not in html
    assert (Part.objects.count(), AuditEvent.objects.count()) == before


def test_unreadable_values_and_unknown_names_are_refused_on_their_line(pm):
    response = _preview(
        pm,
        PARTS,
        _csv(
            HEADER,
            "gpu,NVIDIA,RTX-A,Card A,lots,575,5,16,,1.00,",  # vram_gb: no number
            "gpu,NVIDIA,RTX-B,Card B,32,575,5,16,,1.00,Nobody Ltd",  # no such supplier
            "quantum,NVIDIA,RTX-C,Card C,,575,5,16,,1.00,",  # no such category
        ),
    )
    result = response.context["result"]
    errors = {row.number + 1: row.error_dict for row in result.invalid_rows}
    assert set(errors) == {2, 3, 4}
    assert "vram_gb" in errors[2]
    assert errors[3]["preferred_supplier"] == ["no supplier is named 'Nobody Ltd'."]
    assert "category" in errors[4]
    assert not Part.objects.filter(mpn__startswith="RTX-").exists()


def test_confirming_writes_every_row_through_the_service_with_its_audit_row(pm):
    preview = _preview(pm, PARTS, _csv(HEADER, *GOOD))
    response = _confirm(pm, PARTS, preview)
    assert response.status_code == 302 and response["Location"] == PARTS
    gpu = Part.objects.get(mpn="RTX5090-IMPORT")
    assert (gpu.vram_gb, gpu.list_price, gpu.preferred_supplier.name) == (
        32,
        2399,
        "EuroGPU Distribution GmbH",
    )
    assert Part.objects.filter(mpn="100-000001463", vram_gb=None).exists()
    events = AuditEvent.objects.filter(verb="part.create").order_by("pk")
    assert [(event.object_repr, event.actor) for event in events] == [
        (str(gpu), pm.pm),
        (str(Part.objects.get(mpn="100-000001463")), pm.pm),
    ]
    assert any("Import finished: 2 new" in str(message) for message in get_messages(response.wsgi_request))


def test_a_row_naming_a_stored_part_changes_it_through_part_update(pm):
    part = factories.PartFactory(manufacturer="NVIDIA", mpn="RTX5090-IMPORT", tdp_w=450, vram_gb=32)
    preview = _preview(pm, PARTS, _csv(HEADER, GOOD[0]))
    assert [row.import_type for row in preview.context["result"].valid_rows()] == ["update"]
    assert _confirm(pm, PARTS, preview).status_code == 302
    part.refresh_from_db()
    assert part.tdp_w == 575
    event = AuditEvent.objects.get(verb="part.update")
    assert event.before["tdp_w"] == 450 and event.after["tdp_w"] == 575
    # The same file again changes nothing: its row is skipped, and no audit row is written.
    again = _preview(pm, PARTS, _csv(HEADER, GOOD[0]))
    assert [row.import_type for row in again.context["result"].valid_rows()] == ["skip"]
    _confirm(pm, PARTS, again)
    assert AuditEvent.objects.filter(verb="part.update").count() == 1


def test_a_row_refused_at_confirmation_leaves_every_row_unwritten(pm):
    """The preview was clean; meanwhile the supplier the first row names was renamed. Confirming refuses
    the file: the second row is not written either, and the PM is told which line and why."""
    preview = _preview(pm, PARTS, _csv(HEADER, *GOOD))
    Supplier.objects.filter(name="EuroGPU Distribution GmbH").update(name="EuroGPU (renamed)")
    before = (Part.objects.count(), AuditEvent.objects.count())
    response = _confirm(pm, PARTS, preview)
    assert response.status_code == 302 and response["Location"] == f"{PARTS}import/"
    assert (Part.objects.count(), AuditEvent.objects.count()) == before
    texts = [str(message) for message in get_messages(response.wsgi_request)]
    assert "Line 2: preferred_supplier: no supplier is named 'EuroGPU Distribution GmbH'." in texts
    assert "Nothing was imported: correct the file and upload it again." in texts


def test_suppliers_are_imported_through_supplier_create_and_the_country_rule(pm):
    header = "name,country,vat_id,contact_name,contact_email"
    bad = _preview(
        pm,
        SUPPLIERS,
        _csv(header, "Sofia Parts OOD,BG,BG123,Ivan,ivan@sofia.example", "Nowhere Trading,XX,,,"),
    )
    (invalid,) = bad.context["result"].invalid_rows
    assert invalid.number + 1 == 3 and "country" in invalid.error_dict
    assert not Supplier.objects.filter(name="Sofia Parts OOD").exists()

    good = _preview(pm, SUPPLIERS, _csv(header, "Sofia Parts OOD,bg,BG123,Ivan,ivan@sofia.example"))
    assert _confirm(pm, SUPPLIERS, good).status_code == 302
    supplier = Supplier.objects.get(name="Sofia Parts OOD")
    assert supplier.country == "BG" and supplier.is_eu  # normalised by the service
    assert AuditEvent.objects.filter(verb="supplier.create", object_id=str(supplier.pk)).exists()


def test_the_import_is_for_pms_only(tenants):
    staff = factories.UserFactory(username="staff-not-pm", is_staff=True)
    for user, expected in ((staff, 403), (tenants.user_a, 302)):
        client = Client()
        client.force_login(user)
        for path in ("import/", "process_import/"):
            response = client.post(f"{PARTS}{path}", {"format": 0, "import_file": _csv(HEADER, *GOOD)})
            assert response.status_code == expected, (user.username, path, response.status_code)
    assert not Part.objects.filter(mpn="RTX5090-IMPORT").exists()
    client = Client()
    client.force_login(staff)
    assert "import/" not in client.get("/admin/").content.decode()
