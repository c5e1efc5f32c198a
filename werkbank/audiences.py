"""Who may receive which fields: one rule per role, applied to every API serializer.

`visible_to` (werkbank/access.py) decides which rows a user sees. This module decides which fields of those
rows a user receives. There are three audiences:

PM (a project manager: staff in the PM group)
    Everything, except secrets, which no serializer reads back (BMC credentials: `bmc_credentials_set` only).

Partner (a member of an assembly-partner organization)
    What the bench work needs: the part catalogue's specs; the purchase orders delivered to its workshop as
    delivery notes (number, status, parts, quantities ordered and received); the lots and serials it
    received (lot code, date code, country of origin); the servers assigned to it with their build records
    and the usernames on them (the bench's own ledger); their burn-in results and findings with waivers;
    their placements and network records. Never the builder's purchasing: no prices or costs, no
    suppliers (neither the supplier of a PO, a lot or a component, nor a part's preferred supplier), no
    currency of a PO, no override reasons and no notes that PMs wrote for PMs.

Customer (a member of a customer organization)
    The facts of its own orders and servers: what was ordered and its terms, the status, its ROI
    assessments and workload (the customer's own business case), the approval checks computed from them,
    its servers and their serials, burn-in runs, results and findings (a waived finding shows that it was
    waived, when, and why: the handover pack prints the reason for the customer), placements, network
    addresses and platform listings, its warranty records, registrations and claims (with the decision's
    note, which is written for the customer). Never the builder's business: no prices or suppliers, no
    purchase orders (neither their ids nor their numbers), no override reasons, no internal notes (order
    notes, transition notes, ROI and listing notes), no assembly partner (a subcontractor, like a
    supplier), and no usernames of the people who did the work (they are login names; the builder speaks
    to its customers as a company). An order's event timeline shows customer-facing events only: status
    changes and the order's creation, with the status before and after, and nothing else.

Bench rows (connectors and their blacklists, installations, allocations, build steps and photos, stock
movements) are never a customer's: `visible_to` gives them to PMs and the partner only, so the usernames on
them need no field rule; their override reasons do (`lot_override_reason`: PMs only).

A user who is a member of both kinds receives what either role may receive. A user who is neither a PM nor a
member sees no rows at all (`visible_to`), and receives no restricted field.

Serializers apply the rule with `werkbank.api.serializers.AudienceFieldsMixin` and three lists in their
`Meta`: `pm_only_fields`, `partner_fields` (PMs and partners) and `customer_fields` (PMs and customers).
A field in none of them goes to everyone who sees the row. A withheld field is left out of the response,
never sent as null; the OpenAPI schema marks such fields as not required and says who receives them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from werkbank.access import is_pm
from werkbank.choices import OrganizationKind


class Audience(StrEnum):
    PM = "pm"
    PARTNER = "partner"
    CUSTOMER = "customer"


#: Every audience: what a serializer's schema documents, and what an internal caller may ask for.
EVERYONE = frozenset(Audience)

#: The order events a customer receives: the order was opened, and each status change. Everything else on
#: an order's trail (updates of its terms, ROI versions, workloads, approval overrides) is the PMs' work.
CUSTOMER_ORDER_VERBS = frozenset(
    {
        "order.create",
        "order.submit",
        "order.approve",
        "order.reject",
        "order.procure",
        "order.start_assembly",
        "order.start_burn_in",
        "order.start_deployment",
        "order.hand_over",
        "order.close",
        "order.cancel",
    }
)

#: The keys of a customer-facing event's `before` and `after` a customer receives.
CUSTOMER_EVENT_KEYS = frozenset({"status"})


def audiences_of(user: Any) -> frozenset[Audience]:
    """The audiences a user belongs to: {PM} for a project manager, else the kinds of its organizations."""
    if is_pm(user):
        return frozenset({Audience.PM})
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    kinds = set(user.memberships.values_list("organization__kind", flat=True).distinct())
    return frozenset(
        audience
        for audience, kind in (
            (Audience.PARTNER, OrganizationKind.PARTNER),
            (Audience.CUSTOMER, OrganizationKind.CUSTOMER),
        )
        if kind in kinds
    )


def field_audiences(meta: Any, field_name: str) -> frozenset[Audience]:
    """Who receives `field_name` of a serializer with this `Meta`."""
    if field_name in getattr(meta, "pm_only_fields", ()):
        return frozenset({Audience.PM})
    if field_name in getattr(meta, "partner_fields", ()):
        return frozenset({Audience.PM, Audience.PARTNER})
    if field_name in getattr(meta, "customer_fields", ()):
        return frozenset({Audience.PM, Audience.CUSTOMER})
    return EVERYONE


def restricted_fields(meta: Any) -> list[str]:
    """The fields of a serializer's `Meta` that not everyone receives, in their declared order."""
    names: list[str] = []
    for attribute in ("pm_only_fields", "partner_fields", "customer_fields"):
        names.extend(name for name in getattr(meta, attribute, ()) if name not in names)
    return names


def withheld_fields(meta: Any, audiences: frozenset[Audience]) -> set[str]:
    """The restricted fields none of `audiences` may receive."""
    return {name for name in restricted_fields(meta) if not field_audiences(meta, name) & audiences}


def describe(audiences: frozenset[Audience]) -> str:
    names = {Audience.PM: "PMs", Audience.PARTNER: "assembly partners", Audience.CUSTOMER: "customers"}
    return " and ".join(names[audience] for audience in Audience if audience in audiences)
