"""Serializers of the core app."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from werkbank.access import is_pm
from werkbank.audiences import (
    CUSTOMER_EVENT_KEYS,
    Audience,
    audiences_of,
    describe,
    field_audiences,
    restricted_fields,
    withheld_fields,
)
from werkbank.models import AuditEvent, Organization


class AudienceFieldsMixin:
    """Leave out the fields the requesting user may not receive (the rule per role: `werkbank.audiences`).

    `Meta.pm_only_fields` go to PMs only, `Meta.partner_fields` to PMs and partners, `Meta.customer_fields`
    to PMs and customers; every other field to everyone who sees the row. Nested serializers apply their own
    lists: they share the root's context. The audience comes from `context["request"].user`, or from
    `context["audience"]` (a set of `Audience`) where there is no request; a serializer with restricted fields
    and neither refuses to guess, so that no caller gets internal fields by forgetting the context, nor loses
    them silently.
    """

    def _request(self) -> Any:
        request = getattr(self, "context", {}).get("request")
        if request is None:
            raise ImproperlyConfigured(
                f"{type(self).__name__} has fields not every audience may receive: pass the request "
                "(or an 'audience') in its context."
            )
        return request

    def _is_pm(self) -> bool:
        context = getattr(self, "context", {})
        if "audience" in context:
            return Audience.PM in context["audience"]
        return is_pm(self._request().user)

    def _audiences(self) -> frozenset[Audience]:
        context = getattr(self, "context", {})
        if "audience" in context:
            return frozenset(context["audience"])
        request = self._request()
        # One query per request for a member (its organizations' kinds), none for a PM.
        cached = getattr(request, "_werkbank_audiences", None)
        if cached is None:
            cached = audiences_of(request.user)
            request._werkbank_audiences = cached
        return cached

    def to_representation(self, instance: Any) -> Any:
        data = super().to_representation(instance)  # type: ignore[misc]
        meta = getattr(self, "Meta", None)
        if not restricted_fields(meta) or self._is_pm():
            return data
        # Only partner and customer fields depend on which kind of member the user is.
        by_kind = getattr(meta, "partner_fields", ()) or getattr(meta, "customer_fields", ())
        for name in withheld_fields(meta, self._audiences() if by_kind else frozenset()):
            data.pop(name, None)
        return data


class AudienceFieldsSchema(OpenApiSerializerExtension):
    """In responses, a field not every audience receives is not required, and its description says who."""

    target_class = AudienceFieldsMixin
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction != "response":
            return schema
        meta = getattr(self.target, "Meta", None)
        for name in restricted_fields(meta):
            if name not in schema.get("properties", {}):
                continue
            if name in schema.get("required", []):
                schema["required"].remove(name)
            prop = schema["properties"][name]
            note = f"Only for {describe(field_audiences(meta, name))}; left out for others."
            target = prop if "$ref" not in prop else None
            if target is None:
                # A $ref cannot carry siblings in OpenAPI 3.0: wrap it.
                schema["properties"][name] = {"allOf": [prop], "description": note}
            else:
                known = target.get("description", "").rstrip()
                target["description"] = (
                    f"{known}{'' if known.endswith('.') else '.'} {note}" if known else note
                )
        if not schema.get("required"):
            schema.pop("required", None)
        return schema


class OrganizationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Organization
        fields = ["id", "name", "kind", "contact_email", "language", "created_at"]
        read_only_fields = ["id", "created_at"]
        # Uniqueness is checked by the service, which names the field; the DB constraint backs it.
        extra_kwargs = {"name": {"validators": []}}


class AuditEventSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    """One audit row. Who is not a PM receives `before` and `after` with the customer-facing keys only
    (`werkbank.audiences.CUSTOMER_EVENT_KEYS`); which events they receive, the view's selector decides."""

    actor = serializers.SerializerMethodField()

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "verb", "before", "after", "note"]
        pm_only_fields = ["note"]
        partner_fields = ["actor"]

    def get_actor(self, event: AuditEvent) -> str | None:
        return event.actor.get_username() if event.actor_id else None

    def to_representation(self, instance: Any) -> Any:
        data = super().to_representation(instance)
        if not self._is_pm():
            for key in ("before", "after"):
                data[key] = {k: v for k, v in (data[key] or {}).items() if k in CUSTOMER_EVENT_KEYS}
        return data


class NoteSerializer(serializers.Serializer):
    """The body of an action that takes an optional note (every app's; one component in the schema)."""

    note = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=2000, help_text="Written on the audit trail."
    )


class ReasonSerializer(serializers.Serializer):
    """The body of an action that needs a written reason."""

    reason = serializers.CharField(max_length=2000, help_text="Why: written on the audit trail.")


class VisiblePrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A foreign key whose choices are the rows visible to the requesting user: no links to other tenants."""

    def __init__(self, model: Any, **kwargs: Any) -> None:
        self.model = model
        super().__init__(**kwargs)

    def get_queryset(self) -> Any:
        request = self.context.get("request")
        return self.model.objects.visible_to(getattr(request, "user", None))
