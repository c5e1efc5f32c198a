"""Serializers of the core app."""

from rest_framework import serializers

from werkbank.models import AuditEvent, Organization


class OrganizationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Organization
        fields = ["id", "name", "kind", "contact_email", "language", "created_at"]
        read_only_fields = ["id", "created_at"]
        # Uniqueness is checked by the service, which names the field; the DB constraint backs it.
        extra_kwargs = {"name": {"validators": []}}


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "verb", "before", "after", "note"]

    def get_actor(self, event: AuditEvent) -> str | None:
        return event.actor.get_username() if event.actor_id else None
