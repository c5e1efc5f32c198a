"""Changing a part's preferred supplier through the API (issue #26: the fuzzer's PATCH found a 500).

`part_update` handed the Supplier instance itself to the audit row, which stores JSON; the audit now
stores a model instance by its name, whichever service passes one.
"""

from __future__ import annotations

import pytest

from tests import factories
from tests.tenants_rig import Tenants, api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_a_pm_changes_a_parts_preferred_supplier_and_the_audit_names_both(tenants: Tenants) -> None:
    before = factories.SupplierFactory(name="Old Supplier")
    after = factories.SupplierFactory(name="New Supplier")
    part = factories.PartFactory(preferred_supplier=before)
    response = api_client(tenants.pm).patch(
        f"/api/v1/inventory/parts/{part.pk}/", {"preferred_supplier": after.pk}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["preferred_supplier"] == after.pk
    event = AuditEvent.objects.get(verb="part.update", object_id=str(part.pk))
    assert event.before == {"preferred_supplier": "Old Supplier (DE)"}
    assert event.after == {"preferred_supplier": "New Supplier (DE)"}
