"""The access chokepoint's purposes: a purpose a model does not offer raises, for everyone."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from builds.models import ChassisLayout, Connector, Server
from inventory.models import Component, PurchaseOrder, PurchaseOrderLine
from orders.models import Order
from werkbank.access import Purpose

pytestmark = pytest.mark.django_db

OFFERED = {
    Server: {Purpose.VIEW, Purpose.BENCH},
    Connector: {Purpose.VIEW, Purpose.BENCH},
    PurchaseOrder: {Purpose.VIEW, Purpose.RECEIVE},
    PurchaseOrderLine: {Purpose.VIEW, Purpose.RECEIVE},
    Order: {Purpose.VIEW},
    Component: {Purpose.VIEW},
    ChassisLayout: {Purpose.VIEW},
}


def _users(tenants):
    return [tenants.pm, tenants.user_a, tenants.user_p, tenants.outsider, AnonymousUser()]


@pytest.mark.parametrize("model", list(OFFERED), ids=lambda model: model.__name__)
def test_a_purpose_the_model_does_not_offer_raises_for_everyone(tenants, model):
    for user in _users(tenants):
        for purpose in set(Purpose) - OFFERED[model]:
            with pytest.raises(ValueError, match=f"{model.__name__}.*no purpose '{purpose}'"):
                model.objects.visible_to(user, purpose=purpose)


@pytest.mark.parametrize("typo", ["build", "VIEW", "", "recieve"])
def test_an_unknown_purpose_raises_even_for_a_pm(tenants, typo):
    with pytest.raises(ValueError, match="offers: bench, view"):
        Server.objects.visible_to(tenants.pm, purpose=typo)
