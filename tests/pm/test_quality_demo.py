"""The demo's fleet quality (issue #29, item 7), as a PM finds it after `manage.py seed_demo`: the flagged
lot of the fleet's first server (3 of 8 cards failed: two at its first burn-in, one on the customer's
claim), the 7U chassis layout's two blacklisted connector positions (seed 003), the field drift at x8 on
the connector, not the card, one supplier return answered with a replacement serial in the same lot, and
spares near the end of their supplier warranty."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.choices import ComponentStatus
from tests.tenants_rig import api_client
from warranty.models import SupplierReturn
from werkbank.demo_context import DEMO_PASSWORD


@pytest.mark.django_db
def test_the_demo_shows_the_flagged_lot_the_7u_positions_a_return_and_old_spares(client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    call_command("seed_demo", quiet=True)
    assert client.login(username="pm", password=DEMO_PASSWORD)

    from django.contrib.auth import get_user_model

    pm = get_user_model().objects.get(username="pm")
    lots = api_client(pm).get("/api/v1/quality/lots/").json()["results"]
    [flagged] = [row for row in lots if row["flagged"]]
    assert (flagged["units"], flagged["failures"], flagged["by_stage"]) == (
        8,
        3,
        {"bench": 0, "burn_in": 2, "field": 0, "claim": 1},
    )
    assert (round(flagged["low"], 4), round(flagged["high"], 4)) == (0.1368, 0.6943)
    page = client.get(reverse("pm:quality")).content.decode()
    assert "13.7–69.4 %" in page
    assert "⚑ flagged" in page

    positions = {
        row["label"]: row for row in api_client(pm).get("/api/v1/quality/positions/").json()["results"]
    }
    seven_u = {
        label.split(" ")[0]: row for label, row in positions.items() if "7U" in label and row["failures"]
    }
    assert set(seven_u) == {"GPU-A2", "GPU-B3"}
    assert all(
        row["by_stage"]["bench"] == row["failures"] == 1 and not row["flagged"] for row in seven_u.values()
    )
    # The field check's x8 link (burnin/demo_field.py) counts against its connector, not the card's lot.
    field = [row for row in positions.values() if row["by_stage"].get("field")]
    assert len(field) == 1 and not field[0]["flagged"]  # one failure never flags a position (min 4 units)

    answered = SupplierReturn.objects.get(outcome="replacement")
    assert answered.replacement.lot == answered.component.lot
    assert answered.replacement.status == ComponentStatus.IN_STOCK
    assert answered.component.status == ComponentStatus.SCRAPPED
    spares = api_client(pm).get("/api/v1/warranty/spares-ending/").json()["results"]
    assert len(spares) == 3
