"""The core's rows of the scale dataset: organisations (customers, one per 40 orders, and five assembly
partners), one member login each with its membership, and the PM login in the project-managers group."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from werkbank.choices import MembershipRole, OrganizationKind
from werkbank.models import Membership, Organization

from .base import EPOCH, ORDERS_PER_CUSTOMER, PARTNERS, PASSWORD, PM_USERNAME, Seeding

USER_NAMES = [
    "id",
    "password",
    "username",
    "first_name",
    "last_name",
    "email",
    "is_staff",
    "is_active",
    "is_superuser",
    "date_joined",
]


@dataclass
class People:
    """The ids the other writers need: the PM, the customers, the partners and each organisation's member."""

    pm_id: int
    customer_ids: list[int] = field(default_factory=list)
    partner_ids: list[int] = field(default_factory=list)
    member_of: dict[int, int] = field(default_factory=dict)


def write_people(seeding: Seeding) -> People:
    """Customers, partners, one member each, and the PM."""
    ids, size = seeding.ids, seeding.size
    user_model = apps.get_model("auth", "User")
    customers_count = max(1, -(-size.orders // ORDERS_PER_CUSTOMER))
    password = make_password(PASSWORD, salt="werkbankscale15")
    organizations: list[tuple[Any, ...]] = []
    memberships: list[tuple[Any, ...]] = []
    people = People(pm_id=ids.take(user_model))
    users: list[tuple[Any, ...]] = [
        (people.pm_id, password, PM_USERNAME, "Scale", "PM", "scale-pm@example.com", True, True, False, EPOCH)
    ]
    for kind, count, prefix in (
        (OrganizationKind.CUSTOMER, customers_count, "customer"),
        (OrganizationKind.PARTNER, PARTNERS, "partner"),
    ):
        for number in range(1, count + 1):
            org_id = ids.take(Organization)
            organizations.append(
                (
                    org_id,
                    f"Scale {prefix} {number:03d}",
                    kind,
                    f"{prefix}{number:03d}@scale.example",
                    "en",
                    EPOCH,
                )
            )
            user_id = ids.take(user_model)
            username = f"scale-{prefix}-{number:03d}"
            users.append(
                (
                    user_id,
                    password,
                    username,
                    "Scale",
                    f"{prefix} {number}",
                    f"{username}@example.com",
                    False,
                    True,
                    False,
                    EPOCH,
                )
            )
            memberships.append((ids.take(Membership), user_id, org_id, MembershipRole.ADMIN, EPOCH))
            people.member_of[org_id] = user_id
            (people.customer_ids if kind == OrganizationKind.CUSTOMER else people.partner_ids).append(org_id)
    seeding.writer.write(user_model, USER_NAMES, users)
    pm = user_model.objects.get(pk=people.pm_id)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    seeding.writer.write(
        Organization, ["id", "name", "kind", "contact_email", "language", "created_at"], organizations
    )
    seeding.writer.write(Membership, ["id", "user", "organization", "role", "created_at"], memberships)
    return people
