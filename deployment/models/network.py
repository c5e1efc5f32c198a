"""How to reach a server: its network record and the encrypted BMC credentials."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from builds.models import Server
from deployment.choices import PrefixRole
from deployment.models.racks import ServerScopedQuerySet, Site
from werkbank.access import Purpose, VisibleToQuerySet


class ServerNetwork(models.Model):
    """How to reach a server: management IP, and its BMC (IPMI) address and MAC.

    BMC credentials are optional and never stored in plain text: `bmc_credentials` holds a Fernet token
    (key from WERKBANK_SECRETS_KEYS, see `werkbank.secrets`). No serializer, page or document reads it.
    """

    server = models.OneToOneField(Server, on_delete=models.PROTECT, related_name="network")
    management_ip = models.GenericIPAddressField("Management IP", unique=True)
    bmc_ip = models.GenericIPAddressField("BMC IP", unique=True)
    bmc_mac = models.CharField("BMC MAC", max_length=17, unique=True)
    bmc_credentials = models.TextField(blank=True, editable=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = ServerScopedQuerySet.as_manager()

    class Meta:
        ordering = ["server_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(bmc_mac__regex=r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$"),
                name="%(app_label)s_%(class)s_bmc_mac_format",
                violation_error_message="The BMC MAC is six lower-case hex pairs joined by colons.",
            ),
            models.CheckConstraint(
                condition=~Q(management_ip=models.F("bmc_ip")),
                name="%(app_label)s_%(class)s_bmc_ip_differs",
                violation_error_message="The BMC has an address of its own.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server.hostname} ({self.management_ip})"

    @property
    def has_bmc_credentials(self) -> bool:
        return bool(self.bmc_credentials)


class IPPrefixQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> IPPrefixQuerySet:
        # A prefix is seen with its site: a customer's own rooms, and a site where a server of theirs stands.
        return self.filter(site__in=Site.objects.scope_for_member(user, purpose).values("pk"))


class IPPrefix(models.Model):
    """A prefix of a site's network that management or BMC addresses are drawn from, with its VLAN and
    gateway (NetBox's `ipam.Prefix`). Stored in canonical form (`ipaddress.ip_network`); the service
    (`deployment.services.prefixes`) keeps the gateway inside it and the site's prefixes apart."""

    site = models.ForeignKey("deployment.Site", on_delete=models.PROTECT, related_name="prefixes")
    prefix = models.CharField(max_length=49, help_text="The network in CIDR form, e.g. 10.20.0.0/24.")
    role = models.CharField(max_length=16, choices=PrefixRole.choices)
    vlan = models.PositiveSmallIntegerField("VLAN", null=True, blank=True)
    gateway = models.GenericIPAddressField(null=True, blank=True)
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = IPPrefixQuerySet.as_manager()

    class Meta:
        ordering = ["site_id", "role", "prefix"]
        verbose_name = "IP prefix"
        verbose_name_plural = "IP prefixes"
        constraints = [
            models.UniqueConstraint(
                fields=["site", "prefix"],
                name="%(app_label)s_%(class)s_unique_prefix",
                violation_error_message="This site has this prefix already.",
            ),
            models.CheckConstraint(
                condition=Q(role__in=PrefixRole.values),
                name="%(app_label)s_%(class)s_role_valid",
                violation_error_message="A prefix is for the management or the BMC network.",
            ),
            models.CheckConstraint(
                condition=Q(vlan__isnull=True) | Q(vlan__gte=1, vlan__lte=4094),
                name="%(app_label)s_%(class)s_vlan_range",
                violation_error_message="A VLAN id lies between 1 and 4094.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix} ({self.get_role_display()})"
