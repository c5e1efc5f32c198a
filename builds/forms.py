"""Bench forms: they check the shape of the input; the rules are the services' (builds.services)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings

from builds.choices import BuildStepKind
from builds.services import photo_check
from werkbank.errors import InvalidInput
from werkbank.jsonfields import parse_json_object


class ScanForm(forms.Form):
    """A scanned serial into a connector: the select of free connectors, or a typed or scanned name."""

    serial = forms.CharField(
        max_length=64,
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "inputmode": "text",
                "autocapitalize": "characters",
                "spellcheck": "false",
                "placeholder": "Scan or type the serial",
            }
        ),
    )
    manufacturer = forms.CharField(
        max_length=100,
        required=False,
        help_text="Only asked for when several manufacturers printed the serial",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    connector = forms.ChoiceField(required=False, label="Connector")
    connector_name = forms.CharField(
        max_length=32,
        required=False,
        label="or type / scan a connector name",
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "list": "connector-names", "spellcheck": "false"}
        ),
    )

    def __init__(self, *args: Any, free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["connector"].choices = [
            ("", "— pick a free connector —"),
            *((name, name) for name in free),
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # A typed or scanned name wins over the select: the service checks it (unknown, blacklisted, taken).
        name = (data.get("connector_name") or "").strip() or data.get("connector") or ""
        if not name and "serial" in data:
            self.add_error("connector", "pick a free connector or type its name.")
        data["target"] = name
        return data


class RemoveForm(forms.Form):
    installation = forms.IntegerField(widget=forms.HiddenInput)
    reason = forms.CharField(
        max_length=500, widget=forms.TextInput(attrs={"placeholder": "Why it comes out"})
    )


class MoveForm(forms.Form):
    installation = forms.IntegerField(widget=forms.HiddenInput)
    to_connector = forms.ChoiceField(label="Move to")
    reason = forms.CharField(max_length=500, widget=forms.TextInput(attrs={"placeholder": "Why it moves"}))

    def __init__(self, *args: Any, free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to_connector"].choices = [("", "— free connector —"), *((name, name) for name in free)]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class PhotosField(forms.FileField):
    """Several photos from one input; the service checks each one's content."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, list | tuple) else [data] if data else []
        cleaned = [super(PhotosField, self).clean(item, initial) for item in files]
        for item in cleaned:
            _check_photo(item)
        return cleaned


def _check_photo(upload: Any) -> None:
    """Refuse what the service would refuse before anything is saved, naming the file for the user.

    The same check as the API's (`builds.services.photo_check`: decoded in full, bounded in bytes and
    pixels); the service checks again and stores the re-encoded image. Files are written only after the
    commit either way.
    """
    limit = settings.WERKBANK_MAX_PHOTO_BYTES
    if upload.size > limit:
        raise forms.ValidationError(
            f"{upload.name} is {upload.size:,} bytes; a photo may have at most {limit:,} bytes."
        )
    data = upload.read(limit + 1)
    upload.seek(0)
    try:
        photo_check(data, which=f"{upload.name} ")
    except InvalidInput as error:
        raise forms.ValidationError(error.field_message) from error


def _json_object(value: str, *, field: str) -> dict[str, Any]:
    """The API's rule (werkbank.jsonfields, as in builds.api.serializers): an empty field is `{}`."""
    value = (value or "").strip()
    if not value:
        return {}
    try:
        return parse_json_object(value, field=field)
    except InvalidInput as exc:
        raise forms.ValidationError(exc.field_message) from None


class StepForm(forms.Form):
    kind = forms.ChoiceField(choices=BuildStepKind.choices, label="Step")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    data = forms.CharField(
        required=False,
        label="Data (JSON object, optional)",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": '{"bios": "2.1.4"}', "spellcheck": "false"}),
    )
    photos = PhotosField(
        required=False,
        widget=MultipleFileInput(attrs={"accept": "image/*", "capture": "environment"}),
    )

    def clean_data(self) -> dict[str, Any]:
        return _json_object(self.cleaned_data.get("data", ""), field="data")


class BlacklistForm(forms.Form):
    """Seed 003: a connector that trained at x8 (13.9 instead of 27.7 GB/s) stays unused for good."""

    connector = forms.ChoiceField(label="Connector")
    reason = forms.CharField(
        max_length=500, widget=forms.TextInput(attrs={"placeholder": "intermittent link training at x8"})
    )
    evidence = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "What was measured, how, and when"}),
    )
    measured_gbps = forms.DecimalField(
        required=False, min_value=Decimal(0), max_digits=8, decimal_places=2, label="Measured H2D GB/s"
    )
    expected_gbps = forms.DecimalField(
        required=False, min_value=Decimal(0), max_digits=8, decimal_places=2, label="Expected GB/s"
    )
    measurements = forms.CharField(
        required=False,
        label="Other measurements (JSON object, optional)",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": '{"link_width": 8}', "spellcheck": "false"}),
    )
    photo = forms.FileField(
        required=False, widget=forms.ClearableFileInput(attrs={"accept": "image/*", "capture": "environment"})
    )
    target_connector = forms.ChoiceField(required=False, label="Move its component to (when occupied)")

    def __init__(self, *args: Any, connectors: list[str], free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["connector"].choices = [("", "— connector —"), *((name, name) for name in connectors)]
        self.fields["target_connector"].choices = [
            ("", "— free connector —"),
            *((name, name) for name in free),
        ]

    def clean_measurements(self) -> dict[str, Any]:
        return _json_object(self.cleaned_data.get("measurements", ""), field="measurements")

    def clean_photo(self) -> Any:
        photo = self.cleaned_data.get("photo")
        if photo:
            _check_photo(photo)
        return photo

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        measurements = dict(data.get("measurements") or {})
        # SI units in the names: bandwidth in GB/s, as the probe reports it.
        if data.get("measured_gbps") is not None:
            measurements["h2d_gbps"] = float(data["measured_gbps"])
        if data.get("expected_gbps") is not None:
            measurements["expected_gbps"] = float(data["expected_gbps"])
        data["all_measurements"] = measurements
        return data
