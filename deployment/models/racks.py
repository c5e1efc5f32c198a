"""Where a server stands: sites, racks, power feeds and rack placements."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from builds.models import Server
from deployment.choices import FeedLeg, Phase, RackFace, SiteKind
from inventory.eu import EU_MEMBER_STATES
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import OrganizationKind
from werkbank.models import Organization, member_organizations


def _servers_of(user: Any) -> models.QuerySet:
    return Server.objects.scope_for_member(user, Purpose.VIEW).values("pk")


class SiteQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> SiteQuerySet:
        # A customer sees its own rooms; anyone sees a site where a server they see stands.
        own = Q(customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))
        hosting = Q(pk__in=RackPlacement.objects.filter(server__in=_servers_of(user)).values("rack__site"))
        return self.filter(own | hosting)


class Site(models.Model):
    """A room that holds racks: an EU colocation, or the customer's own server room (seed 001)."""

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=16, choices=SiteKind.choices)
    operator = models.CharField(
        max_length=200,
        help_text="Who runs the room: the colocation provider, or the customer's facility team.",
    )
    customer = models.ForeignKey(
        Organization,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sites",
        help_text="The customer whose own room this is (customer rooms only).",
    )
    address = models.TextField()
    country = models.CharField("Country (ISO 3166-1 alpha-2)", max_length=2)
    eu = models.BooleanField("In the EU", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SiteQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=SiteKind.values),
                name="%(app_label)s_%(class)s_kind_valid",
                violation_error_message="Unknown site kind.",
            ),
            models.CheckConstraint(
                condition=Q(country__regex=r"^[A-Z]{2}$"),
                name="%(app_label)s_%(class)s_country_iso",
                violation_error_message="The country is an ISO 3166-1 alpha-2 code in capitals, e.g. BG.",
            ),
            models.CheckConstraint(
                condition=Q(eu=True, country__in=sorted(EU_MEMBER_STATES))
                | (Q(eu=False) & ~Q(country__in=sorted(EU_MEMBER_STATES))),
                name="%(app_label)s_%(class)s_eu_matches_country",
                violation_error_message="The EU flag follows the country.",
            ),
            models.CheckConstraint(
                condition=Q(kind=SiteKind.CUSTOMER_ROOM, customer__isnull=False)
                | Q(kind=SiteKind.COLOCATION, customer__isnull=True),
                name="%(app_label)s_%(class)s_customer_room_has_customer",
                violation_error_message="A customer's room names its customer; a colocation names none.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class RackQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> RackQuerySet:
        own = Q(site__customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))
        hosting = Q(pk__in=RackPlacement.objects.filter(server__in=_servers_of(user)).values("rack"))
        return self.filter(own | hosting)


class Rack(models.Model):
    """A rack at a site: its height in U and the power feeds (circuits) that supply it."""

    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="racks")
    name = models.CharField(max_length=64)
    height_u = models.PositiveSmallIntegerField("Height (U)", default=42)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RackQuerySet.as_manager()

    class Meta:
        ordering = ["site_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["site", "name"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="This site already has a rack of this name.",
            ),
            models.CheckConstraint(
                condition=Q(height_u__gte=1, height_u__lte=60),
                name="%(app_label)s_%(class)s_height_range",
                violation_error_message="A rack is 1 to 60 U high.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.site.name} / {self.name}"


class PowerFeedQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> PowerFeedQuerySet:
        return self.filter(rack__in=Rack.objects.scope_for_member(user, purpose))


class PowerFeed(models.Model):
    """One circuit into a rack (a PDU's breaker): voltage line-to-neutral, breaker current, phases, A/B leg.

    Its continuous limit is 0.8 × V × A × phases (NEC's 80 % rule for loads of 3 h or more; a design
    convention in IEC countries; seed 003: 2.9 kW is about 80 % of one 16 A / 230 V circuit).
    """

    rack = models.ForeignKey(Rack, on_delete=models.CASCADE, related_name="feeds")
    name = models.CharField(max_length=32)
    leg = models.CharField(max_length=1, choices=FeedLeg.choices, default=FeedLeg.A)
    voltage_v = models.PositiveSmallIntegerField("Voltage (V, line-to-neutral)", default=230)
    current_a = models.PositiveSmallIntegerField("Breaker (A)", default=16)
    phases = models.PositiveSmallIntegerField(default=1)

    objects = PowerFeedQuerySet.as_manager()

    class Meta:
        ordering = ["rack_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["rack", "name"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="This rack already has a feed of this name.",
            ),
            models.CheckConstraint(
                condition=Q(leg__in=FeedLeg.values),
                name="%(app_label)s_%(class)s_leg_valid",
                violation_error_message="A feed is on leg A or B.",
            ),
            models.CheckConstraint(
                condition=Q(phases__in=[1, 3]),
                name="%(app_label)s_%(class)s_phases_valid",
                violation_error_message="A feed has 1 or 3 phases.",
            ),
            models.CheckConstraint(
                condition=Q(voltage_v__gte=100, voltage_v__lte=480),
                name="%(app_label)s_%(class)s_voltage_range",
                violation_error_message="The voltage lies between 100 and 480 V.",
            ),
            models.CheckConstraint(
                condition=Q(current_a__gte=1, current_a__lte=125),
                name="%(app_label)s_%(class)s_current_range",
                violation_error_message="The breaker current lies between 1 and 125 A.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.voltage_v} V × {self.current_a} A × {self.phases})"

    @property
    def rated_w(self) -> int:
        return self.voltage_v * self.current_a * self.phases

    @property
    def continuous_limit_w(self) -> float:
        return settings.WERKBANK_CIRCUIT_CONTINUOUS_FACTOR * self.rated_w


class ServerScopedQuerySet(VisibleToQuerySet):
    """Rows of one server: seen by whoever sees the server (PMs, its partner, its order's customer)."""

    def scope_for_member(self, user: Any, purpose: Purpose) -> ServerScopedQuerySet:
        return self.filter(server__in=_servers_of(user))


class RackPlacement(models.Model):
    """Where one server stands: its rack, its lowest U and height, the face it is mounted from, and the feeds
    it draws from.

    Two placements never share a U of one rack: on PostgreSQL an exclusion constraint over the U range per
    rack (migration 0002) enforces it, whatever writes the rows; the service checks it too, under a lock on
    the rack, so SQLite refuses the same and the refusal names the server in the way. GPU servers are full
    depth, so a server blocks its U range from both faces.
    """

    server = models.OneToOneField(Server, on_delete=models.PROTECT, related_name="placement")
    rack = models.ForeignKey(Rack, on_delete=models.PROTECT, related_name="placements")
    lowest_u = models.PositiveSmallIntegerField("Lowest U")
    height_u = models.PositiveSmallIntegerField("Height (U)")
    face = models.CharField(max_length=8, choices=RackFace.choices, default=RackFace.FRONT)
    feeds = models.ManyToManyField(PowerFeed, related_name="placements", through="PlacementFeed")
    measured_wall_w = models.PositiveIntegerField(
        "Measured wall power (W)",
        null=True,
        blank=True,
        help_text="Measured at the outlet under full load; counts before any estimate.",
    )
    power_override_reason = models.TextField(
        blank=True, help_text="Why a PM accepted this placement above a circuit's continuous limit."
    )
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    placed_at = models.DateTimeField(auto_now_add=True)

    objects = ServerScopedQuerySet.as_manager()

    class Meta:
        ordering = ["rack_id", "-lowest_u"]
        constraints = [
            models.CheckConstraint(
                condition=Q(lowest_u__gte=1),
                name="%(app_label)s_%(class)s_lowest_u_positive",
                violation_error_message="U positions count from 1.",
            ),
            models.CheckConstraint(
                condition=Q(height_u__gte=1),
                name="%(app_label)s_%(class)s_height_positive",
                violation_error_message="A server is at least 1U high.",
            ),
            models.CheckConstraint(
                condition=Q(face__in=RackFace.values),
                name="%(app_label)s_%(class)s_face_valid",
                violation_error_message="A server is mounted from the front or the rear.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server.hostname} in {self.rack.name} U{self.lowest_u}–U{self.top_u}"

    @property
    def top_u(self) -> int:
        return self.lowest_u + self.height_u - 1


class PlacementFeed(models.Model):
    """One feed a placement draws from, and the phase(s) of that feed its PSU group hangs on (the load splits
    evenly over the phases named). `phase_assumed` marks a link whose phase nobody chose: the placements of
    before phases were recorded were migrated to L1 (migration 0006), and a three-phase feed whose phase is
    left out when placing draws from L1 by assumption; both are listed for review (`placement_set_phases`
    confirms them)."""

    rackplacement = models.ForeignKey(RackPlacement, on_delete=models.CASCADE, related_name="feed_links")
    powerfeed = models.ForeignKey(PowerFeed, on_delete=models.CASCADE, related_name="placement_links")
    phase = models.CharField(max_length=8, choices=Phase.choices, default=Phase.L1)
    phase_assumed = models.BooleanField(
        default=False,
        help_text="Nobody chose the phase: L1 was set by the migration, or assumed where a three-phase "
        "feed's phase was left out when placing. Review it.",
    )

    class Meta:
        db_table = "deployment_rackplacement_feeds"
        ordering = ["rackplacement_id", "powerfeed_id"]
        unique_together = [("rackplacement", "powerfeed")]
        constraints = [
            models.CheckConstraint(
                condition=Q(phase__in=Phase.values),
                name="%(app_label)s_%(class)s_phase_valid",
                violation_error_message="A phase is L1, L2, L3 or a combination of them.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rackplacement_id} on {self.powerfeed_id} ({self.phase})"
