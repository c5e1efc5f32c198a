"""Demo data of the core: the seeds' organizations and the demo logins."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from werkbank.choices import OrganizationKind
from werkbank.demo_context import DEMO_PASSWORD, DemoContext
from werkbank.models import Membership, Organization
from werkbank.services import membership_add, organization_create

ORGANIZATIONS = [
    ("Vastfleet Rentals GmbH", OrganizationKind.CUSTOMER, "ops@vastfleet.example", "de"),
    ("NEOXIS AD", OrganizationKind.CUSTOMER, "infra@neoxis.example", "en"),
    ("Inferenzlabor GmbH", OrganizationKind.CUSTOMER, "it@inferenzlabor.example", "de"),
    ("Kentino Werkstatt", OrganizationKind.PARTNER, "werkstatt@kentino.example", "en"),
]

# username, e-mail, organization (None: PM), what they are
USERS = [
    ("pm", "pm@werkbank.example", None, "project manager (admin, API)"),
    ("kentino", "bench@kentino.example", "Kentino Werkstatt", "assembly partner member"),
    ("vastfleet", "ops@vastfleet.example", "Vastfleet Rentals GmbH", "customer member"),
    ("neoxis", "infra@neoxis.example", "NEOXIS AD", "customer member"),
    ("inferenzlabor", "it@inferenzlabor.example", "Inferenzlabor GmbH", "customer member"),
]


def seed(context: DemoContext) -> None:
    pm = _user("pm", "pm@werkbank.example", pm=True)
    context.pm = pm
    for name, kind, email, language in ORGANIZATIONS:
        organization = Organization.objects.filter(name=name).first()
        if organization is None:
            organization = organization_create(
                actor=pm, name=name, kind=kind, contact_email=email, language=language
            )
            context.created += 1
        context.organizations[name] = organization
    for username, email, organization_name, role in USERS:
        if organization_name is None:
            context.logins.append((username, role))
            continue
        user = _user(username, email)
        organization = context.organizations[organization_name]
        if not Membership.objects.filter(user=user, organization=organization).exists():
            membership_add(actor=pm, organization=organization, user=user)
            context.created += 1
        context.logins.append((username, f"{role} of {organization_name}"))


def _user(username: str, email: str, *, pm: bool = False):
    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    if user is None:
        user = user_model.objects.create_user(
            username=username, email=email, password=DEMO_PASSWORD, is_staff=pm
        )
    if pm:
        group, _ = Group.objects.get_or_create(name=settings.WERKBANK_PM_GROUP)
        user.groups.add(group)
    return user
