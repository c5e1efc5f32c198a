"""Serializer fields shared by the apps' APIs."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from werkbank import jsonfields
from werkbank.errors import InvalidInput


class JSONObjectField(serializers.JSONField):
    """A JSON object, held to werkbank.jsonfields' rules (size, nesting, finite numbers): the same rules,
    and sentences, as the bench forms' JSON fields.

    In a JSON body it arrives parsed; in a multipart body as text, which is parsed here by the same rules.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.max_bytes = kwargs.pop("max_bytes", jsonfields.MAX_FIELD_BYTES)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        try:
            if isinstance(data, str | bytes):
                return jsonfields.parse_json_object(data, field=self.field_name, max_bytes=self.max_bytes)
            return jsonfields.check_json_object(data, field=self.field_name, max_bytes=self.max_bytes)
        except InvalidInput as exc:
            raise serializers.ValidationError(exc.field_message) from None
