"""Serializers of the core app."""

from __future__ import annotations

from typing import Any

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


class VisiblePrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A foreign key whose choices are the rows visible to the requesting user: no links to other tenants."""

    def __init__(self, model: Any, **kwargs: Any) -> None:
        self.model = model
        super().__init__(**kwargs)

    def get_queryset(self) -> Any:
        request = self.context.get("request")
        return self.model.objects.visible_to(getattr(request, "user", None))
