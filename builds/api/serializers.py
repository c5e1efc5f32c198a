"""Serializers of the builds app. Statuses are read-only: they change through actions.

Output serializers list the rows as the bench and the PM see them; the small input serializers carry the body
of one action each. Connectors and their blacklist are read-only here: a blacklist is only ever added, by the
`blacklist` action.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    Connector,
    ConnectorBlacklist,
    Installation,
    LayoutConnector,
    Server,
)
from builds.steps import schema_description
from werkbank.api.fields import JSONObjectField
from werkbank.api.serializers import AudienceFieldsMixin, VisiblePrimaryKeyField
from werkbank.models import Organization

#: Photos one step may carry in one request; more are refused with a 400 before anything is read.
MAX_PHOTOS_PER_STEP = 10
#: Serials one `allocate` request may name (a server holds at most a few dozen components).
MAX_SERIALS_PER_ALLOCATION = 64


class EnumField(serializers.ChoiceField):
    """A choice field documented once, as the named enum `<Choices>Enum` of the OpenAPI schema.

    Several choice sets share the field name `kind` (organizations, connectors, build steps); named after
    their choices class they need no ENUM_NAME_OVERRIDES entry.
    """

    def __init__(self, choices_class: type[models.TextChoices], **kwargs: Any) -> None:
        self.choices_class = choices_class
        super().__init__(choices=choices_class.choices, **kwargs)


class EnumFieldSchema(OpenApiSerializerFieldExtension):
    target_class = EnumField

    def get_name(self) -> str:
        return f"{self.target.choices_class.__name__}Enum"

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        choices = self.target.choices_class
        return {
            "type": "string",
            "enum": list(choices.values),
            "description": "\n".join(f"* `{value}` - {label}" for value, label in choices.choices),
        }


class ServerSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    order_reference = serializers.CharField(source="order.reference", read_only=True)
    partner_name = serializers.CharField(source="partner.name", read_only=True, allow_null=True)
    connector_count = serializers.IntegerField(read_only=True)
    installed_count = serializers.IntegerField(read_only=True)
    blacklisted_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Server
        fields = [
            "id",
            "order",
            "order_reference",
            "sequence",
            "hostname",
            "asset_tag",
            "chassis_serial",
            "partner",
            "partner_name",
            "status",
            "connector_count",
            "installed_count",
            "blacklisted_count",
            "created_at",
        ]
        read_only_fields = fields
        # The assembly partner is the builder's subcontractor: customers are not told who built a server.
        partner_fields = ["partner", "partner_name"]


class ConnectorBlacklistSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ConnectorBlacklist
        fields = ["reason", "evidence", "measurements", "photo", "created_by", "created_at"]
        read_only_fields = fields


class ConnectorSerializer(serializers.ModelSerializer):
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    kind = EnumField(ConnectorKind, read_only=True)
    blacklist = ConnectorBlacklistSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Connector
        fields = [
            "id",
            "server",
            "server_hostname",
            "name",
            "kind",
            "position",
            "numa_node",
            "pcie_gen",
            "pcie_lanes",
            "cooling_block",
            "blacklist",
        ]
        read_only_fields = fields


class InstallationSerializer(serializers.ModelSerializer):
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    connector_name = serializers.CharField(source="connector.name", read_only=True)
    serial = serializers.CharField(source="component.serial", read_only=True)
    part_mpn = serializers.CharField(source="component.part.mpn", read_only=True)
    installed_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    removed_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    active = serializers.SerializerMethodField()

    class Meta:
        model = Installation
        fields = [
            "id",
            "server",
            "server_hostname",
            "connector",
            "connector_name",
            "component",
            "serial",
            "part_mpn",
            "active",
            "installed_by",
            "installed_at",
            "removed_by",
            "removed_at",
            "removal_reason",
        ]
        read_only_fields = fields

    def get_active(self, installation: Installation) -> bool:
        return installation.removed_at is None


class AllocationSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    serial = serializers.CharField(source="component.serial", read_only=True)
    part_mpn = serializers.CharField(source="component.part.mpn", read_only=True)
    lot_code = serializers.CharField(source="component.lot.lot_code", read_only=True)
    allocated_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Allocation
        fields = [
            "id",
            "server",
            "server_hostname",
            "component",
            "serial",
            "part_mpn",
            "lot_code",
            "allocated_by",
            "allocated_at",
            "lot_override_reason",
            "released_at",
        ]
        read_only_fields = fields
        pm_only_fields = ["lot_override_reason"]


class BuildPhotoSerializer(serializers.ModelSerializer):
    """A photo's metadata; the file itself comes only from the `download` action, after the access check."""

    uploaded_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = BuildPhoto
        fields = ["id", "server", "step", "content_type", "size_bytes", "uploaded_by", "created_at"]
        read_only_fields = fields


class BuildStepSerializer(serializers.ModelSerializer):
    kind = EnumField(BuildStepKind, read_only=True)
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)
    photos = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = BuildStep
        fields = ["id", "server", "kind", "actor", "created_at", "notes", "data", "photos"]
        read_only_fields = fields


class LayoutConnectorSerializer(serializers.ModelSerializer):
    kind = EnumField(ConnectorKind, read_only=True)

    class Meta:
        model = LayoutConnector
        fields = ["id", "name", "kind", "position", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]
        read_only_fields = fields


class ChassisLayoutSerializer(serializers.ModelSerializer):
    chassis_mpn = serializers.CharField(source="chassis.mpn", read_only=True)
    chassis_name = serializers.CharField(source="chassis.name", read_only=True)
    connectors = LayoutConnectorSerializer(many=True, read_only=True)

    class Meta:
        model = ChassisLayout
        fields = ["id", "chassis", "chassis_mpn", "chassis_name", "description", "columns", "connectors"]
        read_only_fields = fields


# --- The connector map ---------------------------------------------------------------------------------


class ConnectorMapEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = EnumField(ConnectorKind)
    position = serializers.IntegerField()
    numa_node = serializers.IntegerField(allow_null=True)
    pcie_gen = serializers.IntegerField(allow_null=True)
    pcie_lanes = serializers.IntegerField(allow_null=True)
    cooling_block = serializers.CharField(allow_blank=True)
    state = serializers.ChoiceField(choices=["free", "occupied", "blacklisted"])
    serial = serializers.CharField(
        allow_blank=True, help_text="The component in the connector; empty if none"
    )
    part_mpn = serializers.CharField(allow_blank=True)
    installation = serializers.IntegerField(source="installation_id", allow_null=True)
    blacklist_reason = serializers.CharField(allow_blank=True)
    blacklisted_at = serializers.DateTimeField(allow_null=True)


class ConnectorMapSerializer(serializers.Serializer):
    server = serializers.IntegerField()
    hostname = serializers.CharField()
    status = serializers.CharField()
    columns = serializers.IntegerField(allow_null=True, help_text="Width of the drawing, from the layout")
    connectors = ConnectorMapEntrySerializer(many=True)


# --- Action bodies -------------------------------------------------------------------------------------


class AssignSerializer(serializers.Serializer):
    partner = VisiblePrimaryKeyField(
        Organization, pk_field=serializers.IntegerField(), help_text="The assembly partner organization"
    )


def _manufacturer_field(of: str = "the serial") -> serializers.CharField:
    # Serials match in any letter case; the manufacturer tells apart a serial that several of them printed.
    return serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text=f"Only when several manufacturers printed {of} (a 400 names them): which one",
    )


class AllocateSerializer(serializers.Serializer):
    serials = serializers.ListField(
        child=serializers.CharField(max_length=64),
        min_length=1,
        max_length=MAX_SERIALS_PER_ALLOCATION,
        help_text="Scanned serials to set aside for this server (any letter case)",
    )
    manufacturer = _manufacturer_field("a serial; it then applies to every serial of the list")
    override_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=4000,
        help_text="A PM's written reason to mix GPU lots in one server",
    )


class InstallSerializer(serializers.Serializer):
    serial = serializers.CharField(max_length=64)
    manufacturer = _manufacturer_field()
    connector = serializers.CharField(max_length=32, help_text="The connector's name, e.g. PCIe-3")


class RemoveSerializer(serializers.Serializer):
    serial = serializers.CharField(max_length=64)
    manufacturer = _manufacturer_field()
    reason = serializers.CharField(max_length=500)
    failed = serializers.BooleanField(
        default=False,
        help_text="The component is faulty: it leaves the server's allocation with status failed (for its "
        "supplier return) instead of staying allocated to the server.",
    )


class MoveSerializer(serializers.Serializer):
    serial = serializers.CharField(max_length=64)
    manufacturer = _manufacturer_field()
    to_connector = serializers.CharField(max_length=32)
    reason = serializers.CharField(max_length=500)


class StepLogSerializer(serializers.Serializer):
    kind = EnumField(BuildStepKind)
    notes = serializers.CharField(required=False, allow_blank=True, default="", max_length=10000)
    data = JSONObjectField(
        required=False,
        default=dict,
        help_text=(
            "The step's fields as a JSON object (a string in multipart bodies), by `kind`; a key the kind "
            "does not define, a wrong type, a value out of range or a missing required field is a 400 "
            "naming `data.<field>`:\n" + schema_description()
        ),
    )
    photos = serializers.ListField(
        child=serializers.FileField(),
        required=False,
        default=list,
        max_length=MAX_PHOTOS_PER_STEP,
        help_text=f"Up to {MAX_PHOTOS_PER_STEP} JPEG or PNG photos (multipart; HEIC is refused)",
    )


class PhotoUploadSerializer(serializers.Serializer):
    photo = serializers.FileField(
        help_text=(
            "A JPEG or PNG image (HEIC is refused), decoded in full and stored re-encoded; "
            "its content decides, not its name"
        )
    )
    step = VisiblePrimaryKeyField(
        BuildStep, pk_field=serializers.IntegerField(), required=False, allow_null=True, default=None
    )


class BlacklistSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500)
    evidence = serializers.CharField(required=False, allow_blank=True, default="", max_length=10000)
    measurements = JSONObjectField(
        required=False, default=dict, help_text="Measured figures as a JSON object, e.g. link width"
    )
    photo = VisiblePrimaryKeyField(
        BuildPhoto,
        pk_field=serializers.IntegerField(),
        required=False,
        allow_null=True,
        default=None,
        help_text="A photo of the same server as evidence",
    )
    target_connector = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=32,
        help_text="Where to move the component of an occupied connector",
    )
