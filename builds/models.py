"""Build models: servers, chassis layouts and connectors, allocation, installation, blacklist, build steps."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, Q

from builds.choices import BuildStepKind, ConnectorKind, ServerStatus
from inventory.models import Component, Part
from orders.models import Order, ServerConfiguration
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import OrganizationKind
from werkbank.models import Organization, member_organizations


class ChassisLayoutQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> ChassisLayoutQuerySet:
        # Layouts are the partners' work instructions, not tenant data: every partner member reads them all,
        # customers none.
        return self.filter(Exists(member_organizations(user, kind=OrganizationKind.PARTNER)))


class ChassisLayout(models.Model):
    """The named connectors of one chassis part, from which each server gets its own connectors."""

    chassis = models.OneToOneField(Part, on_delete=models.PROTECT, related_name="layout")
    description = models.TextField(blank=True)
    columns = models.PositiveSmallIntegerField(
        default=8, help_text="Width of the connector map drawing, in cells"
    )

    objects = ChassisLayoutQuerySet.as_manager()

    def __str__(self) -> str:
        return f"Layout of {self.chassis.mpn}"


class LayoutConnector(models.Model):
    """One named place in a chassis: a PCIe slot or riser port, a GPU power cable, a DIMM slot, a bay."""

    layout = models.ForeignKey(ChassisLayout, on_delete=models.CASCADE, related_name="connectors")
    name = models.CharField(max_length=32)
    kind = models.CharField(max_length=16, choices=ConnectorKind.choices)
    position = models.PositiveSmallIntegerField(help_text="Order on the map, left to right, top to bottom")
    numa_node = models.PositiveSmallIntegerField(null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField(null=True, blank=True)
    cooling_block = models.CharField(max_length=16, blank=True)

    class Meta:
        ordering = ["layout_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["layout", "name"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="This layout already has a connector of this name.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ChecklistItem(models.Model):
    """A build step a configuration requires before its servers may be marked assembled."""

    configuration = models.ForeignKey(ServerConfiguration, on_delete=models.CASCADE, related_name="checklist")
    kind = models.CharField(max_length=24, choices=BuildStepKind.choices)

    class Meta:
        ordering = ["configuration_id", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "kind"],
                name="%(app_label)s_%(class)s_unique_kind",
                violation_error_message="This step is already on the checklist.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.configuration}: {self.get_kind_display()}"


class ServerQuerySet(VisibleToQuerySet):
    purposes = frozenset({Purpose.VIEW, Purpose.BENCH})

    def scope_for_member(self, user: Any, purpose: Purpose) -> ServerQuerySet:
        # The bench is what a partner builds: the servers assigned to it. Customers see the servers of their
        # orders, but never work on them.
        assigned = Q(partner__in=member_organizations(user, kind=OrganizationKind.PARTNER))
        if purpose == Purpose.BENCH:
            return self.filter(assigned)
        return self.filter(
            assigned | Q(order__customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))
        )


class Server(models.Model):
    """One unit of an order, built by an assembly partner."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="servers")
    sequence = models.PositiveSmallIntegerField()
    hostname = models.CharField(max_length=63, unique=True)
    chassis_serial = models.CharField(max_length=64, blank=True)
    asset_tag = models.CharField(max_length=32, unique=True)
    partner = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.PROTECT, related_name="assigned_servers"
    )
    status = models.CharField(
        max_length=16, choices=ServerStatus.choices, default=ServerStatus.PLANNED, editable=False
    )
    burnin_gpu_power_w = models.FloatField(
        "GPU power under burn-in (W)",
        null=True,
        blank=True,
        editable=False,
        help_text="The sum of the GPUs' mean board power under full load in the burn-in that passed.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ServerQuerySet.as_manager()

    class Meta:
        ordering = ["order_id", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "sequence"],
                name="%(app_label)s_%(class)s_unique_sequence",
                violation_error_message="This order already has a server with this number.",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ServerStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown server status.",
            ),
        ]

    def __str__(self) -> str:
        return self.hostname


class BenchQuerySet(VisibleToQuerySet):
    """Rows that hang off a server's bench: seen and worked on by its partner's members (and PMs), never by
    customers."""

    purposes = frozenset({Purpose.VIEW, Purpose.BENCH})

    def scope_for_member(self, user: Any, purpose: Purpose) -> BenchQuerySet:
        return self.filter(server__in=Server.objects.scope_for_member(user, Purpose.BENCH))


class Connector(models.Model):
    """A server's own connector, copied from its chassis layout. Once blacklisted, it stays so."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="connectors")
    name = models.CharField(max_length=32)
    kind = models.CharField(max_length=16, choices=ConnectorKind.choices)
    position = models.PositiveSmallIntegerField()
    numa_node = models.PositiveSmallIntegerField(null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField(null=True, blank=True)
    cooling_block = models.CharField(max_length=16, blank=True)

    objects = BenchQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "position", "id"]
        indexes = [models.Index(fields=["server", "position", "id"], name="connector_server_position")]
        constraints = [
            models.UniqueConstraint(
                fields=["server", "name"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="This server already has a connector of this name.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server} {self.name}"


class ConnectorBlacklist(models.Model):
    """A connector that must stay unused for the machine's whole life (seed 003).

    Rows are only ever inserted: no service, API or admin path deletes or changes one, and database
    triggers refuse UPDATE and DELETE (migration 0002).
    """

    connector = models.OneToOneField(Connector, on_delete=models.PROTECT, related_name="blacklist")
    reason = models.CharField(max_length=500)
    evidence = models.TextField(blank=True)
    measurements = models.JSONField(default=dict, blank=True)
    photo = models.ForeignKey("BuildPhoto", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.connector}: {self.reason}"


class Allocation(models.Model):
    """A component set aside for a server. Its warranty registration in the customer's name is the
    warranty app's (`warranty.WarrantyRegistration`, written on `builds.signals.components_allocated`)."""

    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="allocations")
    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="allocations")
    allocated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    allocated_at = models.DateTimeField(auto_now_add=True)
    lot_override_reason = models.TextField(blank=True)
    released_at = models.DateTimeField(null=True, blank=True)

    objects = BenchQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "allocated_at", "id"]
        indexes = [models.Index(fields=["server", "allocated_at", "id"], name="allocation_server_time")]
        constraints = [
            models.UniqueConstraint(
                fields=["component"],
                condition=Q(released_at__isnull=True),
                name="%(app_label)s_%(class)s_one_active_per_component",
                violation_error_message="This component is already allocated to a server.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.component} → {self.server}"


class InstallationQuerySet(BenchQuerySet):
    """Installations, with the one filter every reader of "what is in the server now" shares."""

    def active(self) -> InstallationQuerySet:
        """The installations not yet removed: what is in a connector now. The same condition as the partial
        unique constraints below, so their indexes serve it."""
        return self.filter(removed_at__isnull=True)


class Installation(models.Model):
    """A component in a connector, from its installation to its removal (history is kept)."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="installations")
    connector = models.ForeignKey(Connector, on_delete=models.PROTECT, related_name="installations")
    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="installations")
    installed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    installed_at = models.DateTimeField(auto_now_add=True)
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    removed_at = models.DateTimeField(null=True, blank=True)
    removal_reason = models.CharField(max_length=500, blank=True)

    objects = InstallationQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "installed_at", "id"]
        indexes = [models.Index(fields=["server", "installed_at", "id"], name="installation_server_time")]
        constraints = [
            models.UniqueConstraint(
                fields=["connector"],
                condition=Q(removed_at__isnull=True),
                name="%(app_label)s_%(class)s_one_active_per_connector",
                violation_error_message="This connector is already occupied.",
            ),
            models.UniqueConstraint(
                fields=["component"],
                condition=Q(removed_at__isnull=True),
                name="%(app_label)s_%(class)s_one_active_per_component",
                violation_error_message="This component is already installed.",
            ),
            models.CheckConstraint(
                condition=Q(removed_at__isnull=True) | ~Q(removal_reason=""),
                name="%(app_label)s_%(class)s_removal_has_reason",
                violation_error_message="A removal needs a reason.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.component.serial} in {self.connector}"


class BuildStep(models.Model):
    """One logged step of a server's build."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="steps")
    kind = models.CharField(max_length=24, choices=BuildStepKind.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    notes = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)

    objects = BenchQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "created_at", "id"]
        indexes = [models.Index(fields=["server", "created_at", "id"], name="buildstep_server_time")]

    def __str__(self) -> str:
        return f"{self.server}: {self.get_kind_display()}"


def _photo_path(photo: BuildPhoto, filename: str) -> str:
    # Never the user's file name: a generated one, with the extension of the detected type.
    return f"build-photos/{photo.server_id}/{uuid.uuid4().hex}.{photo.content_type.split('/')[-1]}"


class BuildPhoto(models.Model):
    """A photo from the bench, validated by its content and served only after an access check."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="photos")
    step = models.ForeignKey(
        BuildStep, null=True, blank=True, on_delete=models.PROTECT, related_name="photos"
    )
    file = models.FileField(upload_to=_photo_path, max_length=200)
    content_type = models.CharField(max_length=32)
    size_bytes = models.PositiveIntegerField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BenchQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "created_at", "id"]
        indexes = [models.Index(fields=["server", "created_at", "id"], name="buildphoto_server_time")]
        constraints = [
            models.CheckConstraint(
                condition=Q(content_type__in=["image/jpeg", "image/png", "image/heic"]),
                name="%(app_label)s_%(class)s_image_type",
                violation_error_message="A build photo is a JPEG, PNG or HEIC image.",
            ),
        ]

    def __str__(self) -> str:
        return f"Photo {self.pk} of {self.server}"
