"""Serializers of the deployment app: sites, racks and their circuits, placements, network records, platform
listings and a server's deployment state.

Writes go through the services (deployment/services); these serializers only shape the input. An id in a
write body is looked up among the rows the caller may see: one that does not exist, or that the caller may
not see, is a 404 naming the field (`werkbank.errors.UnknownObject`), never DRF's 400 "Invalid pk".

BMC credentials are write-only: no serializer here reads `ServerNetwork.bmc_credentials`; a response says
only whether some are set.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from builds.api.serializers import EnumField
from builds.models import Server
from deployment.choices import FeedLeg, Phase, Platform, RackFace, SiteKind, Verification
from deployment.models import PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork, Site
from werkbank.api.serializers import AudienceFieldsMixin, VisiblePrimaryKeyField
from werkbank.errors import UnknownObject
from werkbank.models import Organization


@extend_schema_field(OpenApiTypes.INT)
class VisibleObjectField(VisiblePrimaryKeyField):
    """A foreign key among the rows the caller sees; an unknown or invisible id is a 404 naming the field."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as error:
            if "does_not_exist" in error.get_codes():
                raise UnknownObject(
                    self.field_name, f"no {self.model._meta.verbose_name} with id {data} that you may see."
                ) from None
            raise


# --- sites, racks, feeds -------------------------------------------------------------------------------


class SiteSerializer(serializers.ModelSerializer):
    kind = EnumField(SiteKind)
    customer = VisibleObjectField(
        Organization, required=False, allow_null=True, help_text="The customer (customer rooms only)."
    )
    # No `default=`: DRF skips a read-only field's default in a partial update, so PATCH left it out.
    customer_name = serializers.CharField(source="customer.name", read_only=True, allow_null=True)
    # Up to 64 characters: the service normalizes (and checks) the ISO code.
    country = serializers.CharField(max_length=64, help_text="ISO 3166-1 alpha-2 code, e.g. BG.")
    rack_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Site
        fields = [
            "id",
            "name",
            "kind",
            "operator",
            "customer",
            "customer_name",
            "address",
            "country",
            "eu",
            "rack_count",
            "created_at",
        ]
        read_only_fields = ["id", "customer_name", "eu", "rack_count", "created_at"]
        # The service checks the name's uniqueness and names the field (409).
        extra_kwargs = {"name": {"validators": []}}


class RackFeedSerializer(serializers.ModelSerializer):
    """A rack's circuit, as the rack list shows it."""

    leg = EnumField(FeedLeg, read_only=True)
    rated_w = serializers.IntegerField(read_only=True, help_text="V × A × phases.")
    continuous_limit_w = serializers.FloatField(read_only=True, help_text="0.8 × V × A × phases.")

    class Meta:
        model = PowerFeed
        fields = ["id", "name", "leg", "voltage_v", "current_a", "phases", "rated_w", "continuous_limit_w"]
        read_only_fields = fields


class PhaseLoadSerializer(serializers.Serializer):
    """One phase of a circuit (a `deployment.phases.PhaseLoad`): its load against 0.8 × V × A."""

    phase = serializers.CharField(source="line", help_text="L1, L2 or L3.")
    load_w = serializers.FloatField(help_text="The shares of the servers on this phase.")
    limit_w = serializers.FloatField(help_text="0.8 × V × A.")
    percent_of_limit = serializers.FloatField()
    ok = serializers.BooleanField()


class FeedLoadSerializer(serializers.Serializer):
    """A rack's circuit with what its servers draw (a `deployment.selectors.FeedLoad`)."""

    id = serializers.IntegerField(source="feed.pk")
    name = serializers.CharField(source="feed.name")
    leg = EnumField(FeedLeg, source="feed.leg")
    voltage_v = serializers.IntegerField(source="feed.voltage_v")
    current_a = serializers.IntegerField(source="feed.current_a")
    phases = serializers.IntegerField(source="feed.phases")
    rated_w = serializers.IntegerField(help_text="V × A × phases.")
    continuous_limit_w = serializers.FloatField(source="limit_w", help_text="0.8 × V × A × phases.")
    load_w = serializers.FloatField(help_text="The full wall power of every server on the circuit.")
    limit_w = serializers.FloatField(help_text="The continuous limit the load is held to.")
    margin_w = serializers.FloatField(help_text="Limit minus load; negative when over.")
    percent_of_limit = serializers.FloatField()
    percent_of_rated = serializers.FloatField()
    ok = serializers.BooleanField(help_text="Within the continuous limit, in all and on each phase.")
    phase_loads = PhaseLoadSerializer(
        many=True, help_text="Each phase (L1 only on a single-phase feed) with its servers' shares."
    )
    imbalance_percent = serializers.FloatField(
        allow_null=True, help_text="(Highest − lowest phase) / their mean, in %; null on a single phase."
    )


class RackSerializer(serializers.ModelSerializer):
    """A rack as the list shows it, and the body of its writes. The site is fixed once the rack exists."""

    site = VisibleObjectField(Site)
    site_name = serializers.CharField(source="site.name", read_only=True)
    feeds = RackFeedSerializer(many=True, read_only=True)
    placement_count = serializers.IntegerField(read_only=True, help_text="Servers placed in the rack.")

    class Meta:
        model = Rack
        fields = ["id", "site", "site_name", "name", "height_u", "feeds", "placement_count", "created_at"]
        read_only_fields = ["id", "site_name", "feeds", "placement_count", "created_at"]
        validators: list = []  # the service checks (site, name) and says so (409)


class RackDetailSerializer(RackSerializer):
    """One rack with its circuits' loads (`deployment.selectors.feed_loads`)."""

    feeds = FeedLoadSerializer(many=True, read_only=True, source="loads")

    class Meta(RackSerializer.Meta):
        read_only_fields = RackSerializer.Meta.fields


class ServerOnFeedSerializer(serializers.Serializer):
    """A server on a circuit. A server the viewer may not see is only `{hostname: null, occupied: true,
    wall_w}`: never another tenant's name."""

    hostname = serializers.CharField(allow_null=True)
    occupied = serializers.BooleanField()
    wall_w = serializers.FloatField()
    source = serializers.CharField(
        required=False, help_text="measured, burn_in or budget (servers the viewer may see only)."
    )
    source_label = serializers.CharField(required=False)


class FeedPowerSerializer(FeedLoadSerializer):
    servers = ServerOnFeedSerializer(many=True, source="server_rows")


class RackPowerSerializer(serializers.Serializer):
    rack = serializers.IntegerField()
    rack_name = serializers.CharField()
    site_name = serializers.CharField()
    feeds = FeedPowerSerializer(many=True)


class PowerFeedSerializer(serializers.ModelSerializer):
    """A circuit into a rack: voltage line-to-neutral, breaker current, phases and its A/B leg. The rack is
    fixed once the feed exists."""

    rack = VisibleObjectField(Rack)
    rack_name = serializers.CharField(source="rack.name", read_only=True)
    leg = EnumField(FeedLeg, required=False)
    voltage_v = serializers.IntegerField(help_text="Line-to-neutral, 100 to 480 V.")
    current_a = serializers.IntegerField(help_text="The breaker, 1 to 125 A.")
    phases = serializers.IntegerField(required=False, help_text="1 or 3.")
    rated_w = serializers.IntegerField(read_only=True, help_text="V × A × phases.")
    continuous_limit_w = serializers.FloatField(read_only=True, help_text="0.8 × V × A × phases.")

    class Meta:
        model = PowerFeed
        fields = [
            "id",
            "rack",
            "rack_name",
            "name",
            "leg",
            "voltage_v",
            "current_a",
            "phases",
            "rated_w",
            "continuous_limit_w",
        ]
        read_only_fields = ["id", "rack_name", "rated_w", "continuous_limit_w"]
        validators: list = []  # the service checks (rack, name) and says so (409)


# --- placements ----------------------------------------------------------------------------------------


class FeedNameSerializer(serializers.ModelSerializer):
    class Meta:
        model = PowerFeed
        fields = ["id", "name"]
        read_only_fields = fields


class FeedPhaseSerializer(serializers.Serializer):
    """A feed of a placement with the phase(s) the server draws from (a `PlacementFeed`)."""

    id = serializers.IntegerField(source="powerfeed_id")
    name = serializers.CharField(source="powerfeed.name")
    phase = EnumField(Phase)
    phase_assumed = serializers.BooleanField(
        help_text="Nobody chose the phase (set to L1 by the migration, or left out on a three-phase feed)."
    )


class PlacementSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    hostname = serializers.CharField(source="server.hostname", read_only=True)
    asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    rack_name = serializers.CharField(source="rack.name", read_only=True)
    site_name = serializers.CharField(source="rack.site.name", read_only=True)
    top_u = serializers.IntegerField(read_only=True)
    face = EnumField(RackFace, read_only=True)
    feeds = FeedPhaseSerializer(many=True, read_only=True, source="feed_links")
    power_override_reason = serializers.CharField(
        read_only=True, help_text="Why a PM accepted the placement above a circuit's limit."
    )

    class Meta:
        model = RackPlacement
        fields = [
            "id",
            "server",
            "hostname",
            "asset_tag",
            "rack",
            "rack_name",
            "site_name",
            "lowest_u",
            "top_u",
            "height_u",
            "face",
            "feeds",
            "measured_wall_w",
            "power_override_reason",
            "placed_at",
        ]
        read_only_fields = fields
        # The override reason is an internal note between PMs (why a circuit may run hot); the customer and
        # the partner see the placement, not the PMs' reasoning.
        pm_only_fields = ["power_override_reason"]


class PlacementCreateSerializer(serializers.Serializer):
    server = VisibleObjectField(Server)
    rack = VisibleObjectField(Rack)
    lowest_u = serializers.IntegerField(min_value=1, help_text="The lowest U the server occupies.")
    feeds = serializers.ListField(
        child=serializers.IntegerField(), allow_empty=False, help_text="Ids of the rack's feeds it uses."
    )
    face = EnumField(RackFace, default=RackFace.FRONT)
    measured_wall_w = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, default=None, help_text="Measured at the outlet (W)."
    )
    override_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="A PM's reason to place above a circuit's continuous limit; audited.",
    )
    phases = serializers.DictField(
        child=serializers.CharField(max_length=16),
        required=False,
        default=dict,
        help_text='Feed id → the phase(s) its PSU group draws from, e.g. {"12": "L2", "13": "L1+L2+L3"}; '
        "a feed left out draws from L1 (on a three-phase feed recorded as assumed, for review).",
    )

    def validate_phases(self, value: dict[str, str]) -> dict[int, str]:
        phases = {}
        for key, phase in value.items():
            try:
                phases[int(key)] = phase
            except ValueError:
                raise serializers.ValidationError(f"{key!r} is not a feed id.") from None
        return phases

    def validate_feeds(self, value: list[int]) -> list[PowerFeed]:
        request = self.context["request"]
        found = {feed.pk: feed for feed in PowerFeed.objects.visible_to(request.user).filter(pk__in=value)}
        unknown = [str(pk) for pk in dict.fromkeys(value) if pk not in found]
        if unknown:
            raise UnknownObject("feeds", f"no power feed with id {', '.join(unknown)} that you may see.")
        return [found[pk] for pk in dict.fromkeys(value)]


class RemovalSerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=2000, help_text="Written on the audit trail."
    )


# --- network -------------------------------------------------------------------------------------------


class NetworkSerializer(serializers.ModelSerializer):
    """A server's network record. The BMC credentials are never read back: `bmc_credentials_set` only."""

    hostname = serializers.CharField(source="server.hostname", read_only=True)
    asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    bmc_credentials_set = serializers.BooleanField(source="has_bmc_credentials", read_only=True)

    class Meta:
        model = ServerNetwork
        fields = [
            "id",
            "server",
            "hostname",
            "asset_tag",
            "management_ip",
            "bmc_ip",
            "bmc_mac",
            "bmc_credentials_set",
            "updated_at",
        ]
        read_only_fields = fields


class NetworkUpdateSerializer(serializers.Serializer):
    """The body of a change to a network record. Addresses left out keep their value; a BMC username or
    password left out keeps the stored one. Addresses are checked by the service (400 naming the field; 409
    for one another server uses)."""

    hostname = serializers.CharField(
        required=False, max_length=253, help_text="Renames the server (unique across all servers)."
    )
    management_ip = serializers.CharField(max_length=64, required=False)
    bmc_ip = serializers.CharField(max_length=64, required=False)
    bmc_mac = serializers.CharField(max_length=64, required=False)
    bmc_username = serializers.CharField(
        required=False, write_only=True, allow_blank=True, trim_whitespace=False, max_length=256
    )
    bmc_password = serializers.CharField(
        required=False,
        write_only=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=256,
        style={"input_type": "password"},
    )
    clear_bmc_credentials = serializers.BooleanField(
        required=False, default=False, help_text="Forget the stored BMC credentials."
    )


class NetworkCreateSerializer(NetworkUpdateSerializer):
    """The body of a server's first network record: the server and its three addresses."""

    server = VisibleObjectField(Server)
    management_ip = serializers.CharField(max_length=64)
    bmc_ip = serializers.CharField(max_length=64)
    bmc_mac = serializers.CharField(max_length=64)


# --- platform listings ---------------------------------------------------------------------------------


class PlatformListingSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    server = VisibleObjectField(Server)
    hostname = serializers.CharField(source="server.hostname", read_only=True)
    asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    platform = EnumField(Platform)
    verification = EnumField(Verification, required=False, default=Verification.UNVERIFIED)
    recorded_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    minimums_override_reason = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="A PM's reason to list a server below the platform's host minimums anyway (409 "
        "`host_minimums` lists what falls short); audited with the shortfalls.",
    )

    class Meta:
        model = PlatformListing
        fields = [
            "id",
            "server",
            "hostname",
            "asset_tag",
            "platform",
            "machine_id",
            "verification",
            "reliability",
            "listed_on",
            "verified_on",
            "note",
            "is_current",
            "recorded_by",
            "recorded_at",
            "minimums_override_reason",
        ]
        read_only_fields = ["id", "hostname", "asset_tag", "is_current", "recorded_by", "recorded_at"]
        pm_only_fields = ["note"]
        partner_fields = ["recorded_by"]
        # The service decides which listing is current (and refuses a machine id in use with a 409); the
        # model's partial unique constraints are its database backstop, not rules for the request body.
        validators: list = []


# --- a server's deployment state -----------------------------------------------------------------------


class PlacementSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rack = serializers.IntegerField(source="rack_id")
    rack_name = serializers.CharField(source="rack.name")
    site_name = serializers.CharField(source="rack.site.name")
    lowest_u = serializers.IntegerField()
    top_u = serializers.IntegerField()
    face = EnumField(RackFace)
    feeds = FeedNameSerializer(many=True)


class NetworkSummarySerializer(serializers.Serializer):
    management_ip = serializers.CharField()
    bmc_ip = serializers.CharField()
    bmc_mac = serializers.CharField()
    bmc_credentials_set = serializers.BooleanField(source="has_bmc_credentials")


class ListingSummarySerializer(serializers.Serializer):
    platform = EnumField(Platform)
    machine_id = serializers.CharField()
    verification = EnumField(Verification)
    reliability = serializers.DecimalField(max_digits=5, decimal_places=4, allow_null=True)
    listed_on = serializers.DateField(allow_null=True)
    verified_on = serializers.DateField(allow_null=True)
    recorded_at = serializers.DateTimeField()


class DeployStateSerializer(serializers.Serializer):
    """Where a server stands on its way into production."""

    asset_tag = serializers.CharField(source="server.asset_tag")
    hostname = serializers.CharField(source="server.hostname")
    status = serializers.CharField(source="server.status", help_text="The server's status.")
    deployed = serializers.BooleanField(help_text="The server is deployed (or handed over).")
    ready = serializers.BooleanField(help_text="The server may be deployed now.")
    placement = PlacementSummarySerializer(allow_null=True)
    network = NetworkSummarySerializer(allow_null=True)
    listing = ListingSummarySerializer(allow_null=True, help_text="The current platform listing.")
    missing = serializers.ListField(
        child=serializers.CharField(), help_text="What stands between the server and deployment."
    )


class DeployNoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
