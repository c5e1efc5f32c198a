"""Admin of the customers' rental-platform accounts and the poll's alerts (imported by deployment.admin).

The API key is write-only: the form's key field is empty on every page, never shows the stored token, and
an empty key keeps the stored one. Every write goes through `platform_account_set`; "Poll now" enqueues the
same task the beat schedule runs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from deployment.models import PlatformAccount, PlatformAlert
from deployment.services import platform_account_set
from werkbank.admin import PMAdmin, admin_link, audit_timeline, day, shortened
from werkbank.choices import OrganizationKind
from werkbank.models import Organization
from werkbank.tasks import enqueue_on_commit


class PlatformAccountForm(forms.ModelForm):
    new_api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Write-only: stored encrypted and never shown again. Leave empty to keep the stored key.",
    )

    class Meta:
        model = PlatformAccount
        fields = ["organization", "platform", "label"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        organization = self.fields.get("organization")
        if isinstance(organization, forms.ModelChoiceField):
            organization.queryset = Organization.objects.filter(kind=OrganizationKind.CUSTOMER)


@admin.register(PlatformAccount)
class PlatformAccountAdmin(PMAdmin):
    form = PlatformAccountForm
    list_display = ["organization_link", "platform", "label", "polled", "error"]
    list_filter = ["platform"]
    search_fields = ["organization__name", "label"]
    list_select_related = ["organization"]
    actions = ["poll_now"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["organization", "platform", "label", "new_api_key"]
        return [
            "organization",
            "platform",
            "label",
            "new_api_key",
            "last_polled_at",
            "last_error",
            "timeline",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else ["organization", "platform", "last_polled_at", "last_error", "timeline"]

    @admin.display(description="Customer", ordering="organization__name")
    def organization_link(self, obj: PlatformAccount) -> str:
        return admin_link(obj.organization, obj.organization.name)

    @admin.display(description="Last polled", ordering="last_polled_at")
    def polled(self, obj: PlatformAccount) -> str:
        return day(obj.last_polled_at)

    @admin.display(description="Last error")
    def error(self, obj: PlatformAccount) -> str:
        return shortened(obj.last_error) if obj.last_error else "—"

    @admin.display(description="History")
    def timeline(self, obj: PlatformAccount) -> str:
        return audit_timeline(obj)

    def save_model(self, request: HttpRequest, obj: PlatformAccount, form: Any, change: bool) -> None:
        data = form.cleaned_data
        organization = obj.organization if change else data["organization"]
        platform = obj.platform if change else data["platform"]
        account = platform_account_set(
            organization=organization,
            platform=platform,
            api_key=data.get("new_api_key") or "",
            label=data.get("label") or "",
            actor=request.user,
        )
        obj.pk = account.pk

    @admin.action(description="Poll the platform now")
    def poll_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        for account in queryset.select_related("organization"):
            enqueue_on_commit("deployment.tasks.platform_poll_task", account_id=account.pk)
        self.message_user(
            request, f"{queryset.count()} poll(s) enqueued; the result shows here.", messages.SUCCESS
        )


@admin.register(PlatformAlert)
class PlatformAlertAdmin(PMAdmin):
    """Read-only: the poll writes alerts, `platform_alert_send` e-mails them once."""

    list_display = ["server_link", "kind", "created", "sent", "note"]
    list_filter = ["kind"]
    search_fields = ["listing__server__hostname", "listing__machine_id"]
    list_select_related = ["listing__server"]
    fields = ("listing", "kind", "recipients", "created_at", "sent_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Server", ordering="listing__server__hostname")
    def server_link(self, obj: PlatformAlert) -> str:
        return admin_link(obj.listing.server, obj.listing.server.hostname)

    @admin.display(description="Raised", ordering="created_at")
    def created(self, obj: PlatformAlert) -> str:
        return day(obj.created_at)

    @admin.display(description="Sent", ordering="sent_at")
    def sent(self, obj: PlatformAlert) -> str:
        return day(obj.sent_at)

    @admin.display(description="What the poll read")
    def note(self, obj: PlatformAlert) -> str:
        return shortened(obj.listing.note, 60)
