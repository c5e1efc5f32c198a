"""Admin of the warranty app. Every write goes through a service (warranty/services)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from builds.models import Server
from warranty.choices import PACK_SERVER_STATUSES, PackLanguage, PackStatus
from warranty.models import HandoverPack
from warranty.services.packs import pack_request, pack_retry
from werkbank.admin import PMAdmin

# --- handover packs ----------------------------------------------------------------------------------------


class PackRequestForm(forms.ModelForm):
    """Ask for a new revision of a server's pack: the server and, optionally, the language."""

    server = forms.ModelChoiceField(
        queryset=Server.objects.filter(status__in=sorted(PACK_SERVER_STATUSES)).order_by("hostname"),
        help_text="Deployed or handed-over servers.",
    )
    language = forms.ChoiceField(
        choices=[("", "The customer's language"), *PackLanguage.choices], required=False
    )

    class Meta:
        model = HandoverPack
        fields = ["server", "language"]


@admin.register(HandoverPack)
class HandoverPackAdmin(PMAdmin):
    """Handover packs: rendered by a Celery task, never edited. "Add" asks for a new revision
    (`pack_request`); the actions run a failed pack again (`pack_retry`) or ask for a new revision."""

    list_display = [
        "server",
        "revision",
        "language",
        "status",
        "progress",
        "attempts",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "language"]
    search_fields = ["server__hostname", "server__asset_tag"]
    list_select_related = ["server"]
    show_full_result_count = False
    actions = ["retry_failed", "request_new_revision"]
    #: Every column but the files' names, which `files` links instead.
    readonly = [
        *(field.name for field in HandoverPack._meta.fields if field.name not in {"id", "pdf", "zip"}),
        "files",
    ]

    def get_form(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = PackRequestForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["server", "language"] if obj is None else list(self.readonly)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else list(self.readonly)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a pack is never edited: ask for a new revision instead

    @admin.display(description="Files")
    def files(self, pack: HandoverPack) -> str:
        if pack.status != PackStatus.READY:
            return "—"
        return format_html(
            '<a href="{}">PDF</a> · <a href="{}">ZIP</a>',
            reverse("handover-pack-pdf", args=[pack.pk]),
            reverse("handover-pack-zip", args=[pack.pk]),
        )

    def save_model(self, request: HttpRequest, obj: HandoverPack, form: Any, change: bool) -> None:
        data = form.cleaned_data
        pack = pack_request(server=data["server"], actor=request.user, language=data.get("language") or None)
        obj.pk = pack.pk

    @admin.action(description="Run the selected failed packs again")
    def retry_failed(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request, queryset, lambda pack: pack_retry(pack=pack, actor=request.user), "queued again"
        )

    @admin.action(description="Ask for a new revision of the selected packs (same language)")
    def request_new_revision(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request,
            queryset.select_related("server"),
            lambda pack: pack_request(server=pack.server, actor=request.user, language=pack.language),
            "a new revision is queued",
        )
