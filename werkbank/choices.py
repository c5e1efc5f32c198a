"""Choices of the core app."""

from django.db import models


class OrganizationKind(models.TextChoices):
    CUSTOMER = "customer", "Customer"
    PARTNER = "partner", "Assembly partner"


class MembershipRole(models.TextChoices):
    MEMBER = "member", "Member"
    ADMIN = "admin", "Administrator"
