"""Admin of the warranty app, for PMs: warranty records and registrations (read only: written by the
services at allocation and handover), claims, decided on their change page or by the list actions, and
handover packs (asked for through `pack_request`, re-run through `pack_retry`; never edited).

Every write goes through the services (`warranty.services`), so the transition map, the replacement's
installation through the builds services and the audit rows are the same as through the API.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from builds.models import Server
from deployment.minimum_selectors import reverify_warnings
from inventory.models import Component
from warranty.admin_attributions import AttributionAdmin  # noqa: F401 - registers the attributions' admin
from warranty.admin_returns import SupplierReturnAdmin  # noqa: F401 - registers the supplier returns' admin
from warranty.choices import CLAIM_TRANSITIONS, PACK_SERVER_STATUSES, ClaimStatus, PackLanguage, PackStatus
from warranty.models import (
    ClaimAttachment,
    HandoverPack,
    SupplierReturn,
    WarrantyClaim,
    WarrantyRecord,
    WarrantyRegistration,
)
from warranty.selectors import attachment_download_url
from warranty.services import (
    claim_approve,
    claim_close,
    claim_confirm,
    claim_dismiss,
    claim_reject,
    claim_ship_replacement,
)
from warranty.services.packs import pack_request, pack_retry
from werkbank.admin import PMAdmin, ReadOnlyInline, admin_link, audit_timeline, badge, shortened
from werkbank.errors import DomainError, InvalidInput


class ReadOnlyAdmin(PMAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(WarrantyRecord)
class WarrantyRecordAdmin(ReadOnlyAdmin):
    list_display = [
        "serial",
        "kind",
        "short_description",
        "server_link",
        "customer_name",
        "end_date",
        "replaced_at",
    ]
    list_filter = ["kind", "end_date"]
    list_select_related = ["server", "customer"]
    search_fields = ["serial", "server__hostname", "server__asset_tag"]
    show_full_result_count = False
    readonly_fields = ["timeline"]

    @admin.display(description="Description", ordering="description")
    def short_description(self, obj: WarrantyRecord) -> str:
        return shortened(obj.description, 30)

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: WarrantyRecord) -> str:
        return admin_link(obj.server, obj.server.hostname) if obj.server_id else "—"

    @admin.display(description="Customer", ordering="customer__name")
    def customer_name(self, obj: WarrantyRecord) -> str:
        return shortened(obj.customer.name, 24) if obj.customer_id else "—"

    @admin.display(description="Audit timeline")
    def timeline(self, obj: WarrantyRecord) -> str:
        return audit_timeline(obj)


@admin.register(WarrantyRegistration)
class WarrantyRegistrationAdmin(ReadOnlyAdmin):
    list_display = ["component_link", "server_link", "customer", "registered_at"]
    list_select_related = ["component__part", "server", "customer"]
    search_fields = ["component__serial", "server__hostname"]
    show_full_result_count = False

    @admin.display(description="Component", ordering="component__serial")
    def component_link(self, obj: WarrantyRegistration) -> str:
        return admin_link(obj.component)

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: WarrantyRegistration) -> str:
        return admin_link(obj.server, obj.server.hostname) if obj.server_id else "—"


#: The decisions of the claim's change page: (value, label, target status).
DECISIONS = [
    ("confirm", "Confirm the drafted claim (the note says why)", ClaimStatus.OPEN),
    (
        "dismiss",
        "Dismiss the drafted claim (the note says why; shown to the customer)",
        ClaimStatus.DISMISSED,
    ),
    ("approve", "Approve", ClaimStatus.APPROVED),
    ("reject", "Reject (the note says why)", ClaimStatus.REJECTED),
    ("ship_replacement", "Ship the replacement (give its serial)", ClaimStatus.REPLACEMENT_SHIPPED),
    ("close", "Close", ClaimStatus.CLOSED),
]


class ClaimDecisionForm(forms.ModelForm):
    decision = forms.ChoiceField(choices=[("", "—")], required=False)
    note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Shown to the customer."
    )
    replacement_serial = forms.CharField(
        required=False,
        max_length=64,
        help_text="For a shipped replacement: the serial of the same part, in stock.",
    )

    class Meta:
        model = WarrantyClaim
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        allowed = (
            CLAIM_TRANSITIONS.get(self.instance.status, frozenset()) if self.instance.pk else frozenset()
        )
        self.fields["decision"].choices = [("", "—")] + [
            (value, label) for value, label, target in DECISIONS if target in allowed
        ]


class ClaimAttachmentInline(ReadOnlyInline):
    """The claim's logs and photos, each with its download (served after the access check)."""

    model = ClaimAttachment
    fields = readonly_fields = (
        "download", "kind", "content_type", "size_bytes", "sha256", "uploaded_by", "uploaded_at",
    )  # fmt: skip
    verbose_name_plural = "Logs and photos"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("uploaded_by")

    @admin.display(description="File")
    def download(self, obj: ClaimAttachment) -> str:
        return format_html('<a href="{}" download>{}</a>', attachment_download_url(obj.pk), obj.original_name)


@admin.register(WarrantyClaim)
class WarrantyClaimAdmin(PMAdmin):
    form = ClaimDecisionForm
    inlines = [ClaimAttachmentInline]
    list_display = ["number", "record_link", "customer", "status_badge", "created_at"]
    list_filter = ["status"]
    list_select_related = ["record", "customer"]
    search_fields = ["number", "record__serial", "record__server__hostname", "description"]
    show_full_result_count = False
    actions = ["confirm", "dismiss", "approve", "close"]
    readonly_fields = [
        "number", "record", "customer", "status", "description", "decision_note", "replacement_record",
        "finding", "opened_by", "created_at", "supplier_return_link", "timeline",
    ]  # fmt: skip
    fields = [*readonly_fields, "decision", "note", "replacement_serial"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a claim is filed by the customer (portal, API) or a PM through the API

    def get_formsets_with_inlines(self, request: HttpRequest, obj: Model | None = None) -> Any:
        # The attachments' inline only shows: a POST (a decision) carries nothing of it, so it is not asked
        # for its management form, and a decision posted alone is taken as before.
        if request.method == "POST":
            return
        yield from super().get_formsets_with_inlines(request, obj)

    @admin.display(description="Warranty record", ordering="record__serial")
    def record_link(self, obj: WarrantyClaim) -> str:
        return admin_link(obj.record, obj.record.serial)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: WarrantyClaim) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Supplier return")
    def supplier_return_link(self, obj: WarrantyClaim) -> str:
        supplier_return = SupplierReturn.objects.filter(claim=obj).first()
        if supplier_return is None:
            return "—"
        return admin_link(
            supplier_return, f"{supplier_return.number} ({supplier_return.get_status_display()})"
        )

    @admin.display(description="Audit timeline")
    def timeline(self, obj: WarrantyClaim) -> str:
        return audit_timeline(obj)

    def save_model(self, request: HttpRequest, obj: WarrantyClaim, form: Any, change: bool) -> None:
        decision = form.cleaned_data.get("decision")
        note = form.cleaned_data.get("note", "")
        if decision == "confirm":
            claim_confirm(claim=obj, actor=request.user, note=note)
        elif decision == "dismiss":
            claim_dismiss(claim=obj, actor=request.user, note=note)
        elif decision == "approve":
            claim_approve(claim=obj, actor=request.user, note=note)
        elif decision == "reject":
            claim_reject(claim=obj, actor=request.user, note=note)
        elif decision == "close":
            claim_close(claim=obj, actor=request.user, note=note)
        elif decision == "ship_replacement":
            serial = form.cleaned_data.get("replacement_serial", "").strip()
            found = list(
                Component.objects.with_serial(serial).filter(part_id=obj.record.component.part_id)[:2]
                if obj.record.component_id
                else []
            )
            if len(found) != 1:
                raise InvalidInput(
                    "replacement_serial", f"no single {serial!r} of the claimed component's part."
                )
            claim_ship_replacement(claim=obj, actor=request.user, component=found[0], note=note)
            for warning in reverify_warnings(server=obj.record.server):
                self.message_user(request, warning, messages.WARNING)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # the service wrote everything

    def _draft_decision(
        self, request: HttpRequest, queryset: QuerySet, *, service: Any, label: str, done: str
    ) -> HttpResponse | None:
        """Confirm or dismiss drafted claims: the first post asks for the written reason (as the findings'
        waiver does), the second applies it to each claim through the service."""
        reason = request.POST.get("decision_reason", "").strip()
        if "apply" not in request.POST or not reason:
            return TemplateResponse(
                request,
                "admin/warranty/warrantyclaim/draft_decision.html",
                {
                    **self.admin_site.each_context(request),
                    "title": f"{label} drafted claims",
                    "label": label,
                    "claims": queryset.select_related("record"),
                    "action": request.POST.get("action"),
                    "missing_reason": "apply" in request.POST,
                    "customer_reads": service is claim_dismiss,
                    "opts": self.model._meta,
                    "action_checkbox_name": ACTION_CHECKBOX_NAME,
                },
            )
        self.run_for_each(
            request, queryset, lambda claim: service(claim=claim, actor=request.user, note=reason), done
        )
        return None

    @admin.action(description="Confirm selected drafted claims (with a written reason)")
    def confirm(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._draft_decision(
            request, queryset, service=claim_confirm, label="Confirm", done="confirmed"
        )

    @admin.action(description="Dismiss selected drafted claims (with the reason the customer reads)")
    def dismiss(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._draft_decision(
            request, queryset, service=claim_dismiss, label="Dismiss", done="dismissed"
        )

    @admin.action(description="Approve selected claims")
    def approve(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request, queryset, lambda claim: claim_approve(claim=claim, actor=request.user), "approved"
        )

    @admin.action(description="Close selected claims (replacement shipped)")
    def close(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request, queryset, lambda claim: claim_close(claim=claim, actor=request.user), "closed"
        )


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
    new_revision = forms.BooleanField(
        required=False,
        help_text="A new revision even while one in this language is running (the data changed meanwhile). "
        "Without it, a revision already queued or running is kept.",
    )

    class Meta:
        model = HandoverPack
        fields = ["server", "language"]


@admin.register(HandoverPack)
class HandoverPackAdmin(PMAdmin):
    """Handover packs: rendered by a Celery task, never edited. "Add" asks for a new revision
    (`pack_request`); the actions run a failed pack again (`pack_retry`) or ask for a new revision."""

    list_display = [
        "server_link",
        "revision",
        "language",
        "status_badge",
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
        return ["server", "language", "new_revision"] if obj is None else list(self.readonly)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else list(self.readonly)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a pack is never edited: ask for a new revision instead

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, pack: HandoverPack) -> str:
        return admin_link(pack.server, pack.server.hostname)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, pack: HandoverPack) -> str:
        return badge(pack.status, pack.get_status_display())

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
        pack, created = pack_request(
            server=data["server"],
            actor=request.user,
            language=data.get("language") or None,
            new_revision=bool(data.get("new_revision")),
        )
        obj.pk = pack.pk
        if not created:
            self.message_user(request, _kept(pack), messages.WARNING)

    @admin.action(description="Run the selected failed packs again")
    def retry_failed(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request, queryset, lambda pack: pack_retry(pack=pack, actor=request.user), "queued again"
        )

    @admin.action(description="Ask for a new revision of the selected packs (same language)")
    def request_new_revision(self, request: HttpRequest, queryset: QuerySet) -> None:
        for selected in queryset.select_related("server"):
            try:
                pack, created = pack_request(
                    server=selected.server, actor=request.user, language=selected.language, new_revision=True
                )
            except DomainError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                if created:
                    self.message_user(request, f"{pack}: a new revision is queued.", messages.SUCCESS)
                else:
                    self.message_user(request, _kept(pack), messages.WARNING)


def _kept(pack: HandoverPack) -> str:
    return f"{pack} is already {pack.get_status_display().lower()}; no new revision was made."
