"""Admin of the servers' monthly earnings on a rental platform (imported by deployment.admin).

A month is added through `earning_record` (the same rules as the platform poll: a deployed, listed server,
no future month, one row per server, platform and month, updated in place when recorded again); rows are
never edited or deleted here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from deployment.choices import DEPLOYED_OR_LATER
from deployment.models import PlatformEarning
from deployment.services import earning_record
from werkbank.admin import PMAdmin, admin_link, day

FIELDS = ("server", "platform", "month", "amount", "currency", "gpu_hours")


class PlatformEarningForm(forms.ModelForm):
    class Meta:
        model = PlatformEarning
        fields = list(FIELDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "server" in self.fields:
            field = self.fields["server"]
            field.queryset = field.queryset.filter(status__in=sorted(DEPLOYED_OR_LATER))  # type: ignore[attr-defined]

    def validate_unique(self) -> None:
        """A month recorded again is updated in place by the service, not refused as a duplicate."""


@admin.register(PlatformEarning)
class PlatformEarningAdmin(PMAdmin):
    """One row per server, platform and month, added through `earning_record`; read-only afterwards."""

    form = PlatformEarningForm
    list_display = [
        "server_link",
        "platform",
        "month",
        "amount",
        "currency",
        "gpu_hours",
        "source",
        "recorded",
    ]
    list_filter = ["platform", "source", "currency"]
    search_fields = ["server__hostname", "server__asset_tag"]
    list_select_related = ["server"]
    date_hierarchy = "month"
    fields = FIELDS

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else [*FIELDS, "source", "recorded_at"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return FIELDS if obj is None else (*FIELDS, "source", "recorded_at")

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: PlatformEarning) -> str:
        return admin_link(obj.server, obj.server.hostname)

    @admin.display(description="Recorded", ordering="recorded_at")
    def recorded(self, obj: PlatformEarning) -> str:
        return day(obj.recorded_at)

    def save_model(self, request: HttpRequest, obj: PlatformEarning, form: Any, change: bool) -> None:
        data = form.cleaned_data
        earning = earning_record(
            server=data["server"],
            platform=data["platform"],
            month=data["month"],
            amount=data["amount"],
            currency=data.get("currency") or "EUR",
            gpu_hours=data.get("gpu_hours"),
            actor=request.user,
        )
        obj.pk = earning.pk
