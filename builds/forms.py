"""Bench forms: they check the shape of the input; the rules are the services' (builds.services)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from builds.choices import BuildStepKind
from builds.services import photo_check
from builds.steps import FieldType, StepField, step_fields
from werkbank.errors import InvalidInput


class ScanForm(forms.Form):
    """A scanned serial into a connector: the select of free connectors, or a typed or scanned name."""

    serial = forms.CharField(
        label=_("Serial"),
        max_length=64,
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "inputmode": "text",
                "autocapitalize": "characters",
                "spellcheck": "false",
                "placeholder": _("Scan or type the serial"),
            }
        ),
    )
    manufacturer = forms.CharField(
        max_length=100,
        required=False,
        label=_("Manufacturer"),
        help_text=_("Only asked for when several manufacturers printed the serial"),
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    connector = forms.ChoiceField(required=False, label=_("Connector"))
    connector_name = forms.CharField(
        max_length=32,
        required=False,
        label=_("or type / scan a connector name"),
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "list": "connector-names", "spellcheck": "false"}
        ),
    )

    def __init__(self, *args: Any, free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["connector"].choices = [
            ("", _("— pick a free connector —")),
            *((name, name) for name in free),
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # A typed or scanned name wins over the select: the service checks it (unknown, blacklisted, taken).
        name = (data.get("connector_name") or "").strip() or data.get("connector") or ""
        if not name and "serial" in data:
            self.add_error("connector", _("pick a free connector or type its name."))
        data["target"] = name
        return data


class RemoveForm(forms.Form):
    installation = forms.IntegerField(widget=forms.HiddenInput)
    reason = forms.CharField(
        label=_("Remove: reason"),
        max_length=500,
        widget=forms.TextInput(attrs={"placeholder": _("Why it comes out")}),
    )
    failed = forms.BooleanField(
        label=_("Faulty: back to its supplier"),
        required=False,
        help_text=_("It leaves this server with status failed, for its supplier return."),
    )


class MoveForm(forms.Form):
    installation = forms.IntegerField(widget=forms.HiddenInput)
    to_connector = forms.ChoiceField(label=_("Move to"))
    reason = forms.CharField(
        label=_("Move: reason"),
        max_length=500,
        widget=forms.TextInput(attrs={"placeholder": _("Why it moves")}),
    )

    def __init__(self, *args: Any, free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to_connector"].choices = [
            ("", _("— free connector —")),
            *((name, name) for name in free),
        ]


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
            _("%(name)s is %(size)s bytes; a photo may have at most %(limit)s bytes.")
            % {"name": upload.name, "size": f"{upload.size:,}", "limit": f"{limit:,}"}
        )
    data = upload.read(limit + 1)
    upload.seek(0)
    try:
        photo_check(data, which=f"{upload.name} ")
    except InvalidInput as error:
        raise forms.ValidationError(error.field_message) from error


def step_form_field(field: StepField) -> forms.Field:
    """A form field for one step field: the definition's range as `min`/`max`/`step`, and the phone's
    keyboard by `inputmode` (digits for whole numbers, a decimal point for decimals)."""
    label = f"{field.label} ({field.unit})" if field.unit else str(field.label)
    common: dict[str, Any] = {"label": label, "required": field.required, "help_text": field.help_text}
    if field.type == FieldType.INT:
        return forms.IntegerField(
            min_value=field.min,
            max_value=field.max,
            widget=forms.NumberInput(attrs={"inputmode": "numeric", "step": field.step}),
            **common,
        )
    if field.type == FieldType.DECIMAL:
        return forms.DecimalField(
            min_value=field.min,
            max_value=field.max,
            decimal_places=field.places,
            widget=forms.NumberInput(attrs={"inputmode": "decimal", "step": field.step}),
            **common,
        )
    if field.type == FieldType.BOOL:
        return forms.BooleanField(**{**common, "required": False})
    if field.type == FieldType.CHOICE:
        choices = [("", "—"), *((choice, choice) for choice in field.choices)]
        return forms.ChoiceField(choices=choices, **common)
    return forms.CharField(
        max_length=field.max_length,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        **common,
    )


class StepForm(forms.Form):
    """One build step of one kind: its fields (builds.steps), notes and photos; the service checks again."""

    kind = forms.ChoiceField(choices=BuildStepKind.choices, widget=forms.HiddenInput)
    notes = forms.CharField(label=_("Notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    photos = PhotosField(
        label=_("Photos"),
        required=False,
        widget=MultipleFileInput(attrs={"accept": "image/*", "capture": "environment"}),
    )

    def __init__(self, *args: Any, kind: str, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"step-{kind}_%s")
        kwargs.setdefault("initial", {})["kind"] = kind
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.data_fields = [field.name for field in step_fields(kind)]
        for field in step_fields(kind):
            self.fields[field.name] = step_form_field(field)
        # Measurements first, then notes and photos.
        self.order_fields(["kind", *self.data_fields, "notes", "photos"])

    @property
    def label(self) -> str:
        return str(BuildStepKind(self.kind).label)

    def step_data(self) -> dict[str, Any]:
        """The cleaned measurements as the service takes them (empty fields left out, decimals as text)."""
        data: dict[str, Any] = {}
        for name in self.data_fields:
            value = self.cleaned_data.get(name)
            if value is None or value == "":
                continue
            data[name] = str(value) if isinstance(value, Decimal) else value
        return data


class BlacklistForm(forms.Form):
    """Seed 003: a connector that trained at x8 (13.9 instead of 27.7 GB/s) stays unused for good.

    `confirm` is required: a blacklist cannot be undone, so a POST that does not carry the confirmation is
    refused (400) whether or not the page's script asked in its dialog. Without the script the box shows.
    """

    connector = forms.ChoiceField(label=_("Connector"))
    reason = forms.CharField(
        label=_("Reason"),
        max_length=500,
        widget=forms.TextInput(attrs={"placeholder": _("intermittent link training at x8")}),
    )
    evidence = forms.CharField(
        label=_("Evidence"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": _("What was measured, how, and when")}),
    )
    measured_gbps = forms.DecimalField(
        required=False,
        min_value=Decimal(0),
        max_value=Decimal(1000),
        max_digits=8,
        decimal_places=2,
        label=_("Measured host-to-device bandwidth (GB/s)"),
        widget=forms.NumberInput(attrs={"inputmode": "decimal", "step": "0.01"}),
    )
    expected_gbps = forms.DecimalField(
        required=False,
        min_value=Decimal(0),
        max_value=Decimal(1000),
        max_digits=8,
        decimal_places=2,
        label=_("Expected bandwidth (GB/s)"),
        widget=forms.NumberInput(attrs={"inputmode": "decimal", "step": "0.01"}),
    )
    link_gen = forms.ChoiceField(
        required=False,
        label=_("Link generation trained"),
        choices=[("", "—"), *((gen, gen) for gen in ("Gen3", "Gen4", "Gen5"))],
    )
    link_width = forms.ChoiceField(
        required=False,
        label=_("Link width trained"),
        choices=[("", "—"), *((width, width) for width in ("x16", "x8", "x4", "x1"))],
    )
    photo = forms.FileField(
        label=_("Photo (optional)"),
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": "image/*", "capture": "environment"}),
    )
    target_connector = forms.ChoiceField(required=False, label=_("Move its component to (when occupied)"))
    confirm = forms.BooleanField(
        label=_("I understand that this connector stays blacklisted for good: this cannot be undone."),
        error_messages={"required": _("confirm that the blacklist cannot be undone.")},
    )

    def __init__(self, *args: Any, connectors: list[str], free: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["connector"].choices = [("", _("— connector —")), *((name, name) for name in connectors)]
        self.fields["target_connector"].choices = [
            ("", _("— free connector —")),
            *((name, name) for name in free),
        ]

    def clean_photo(self) -> Any:
        photo = self.cleaned_data.get("photo")
        if photo:
            _check_photo(photo)
        return photo

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # SI units in the names: bandwidth in GB/s, as the probe reports it.
        measurements: dict[str, Any] = {}
        if data.get("measured_gbps") is not None:
            measurements["h2d_gbps"] = float(data["measured_gbps"])
        if data.get("expected_gbps") is not None:
            measurements["expected_gbps"] = float(data["expected_gbps"])
        link = " ".join(bit for bit in (data.get("link_gen"), data.get("link_width")) if bit)
        if link:
            measurements["link"] = link
        data["all_measurements"] = measurements
        return data
