"""Admin of the burn-in app, for PMs: runs with their stages and findings, and findings with a "Waive" action.

Everything is read-only here: reports come in through the API, and the one write, a waiver, goes through
`finding_waive` with the reason the action asks for.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from burnin.choices import Severity
from burnin.models import BurnInRun, BurnInStage, Finding
from burnin.services.gate import finding_waive
from werkbank.admin import PMAdmin, ReadOnlyInline, admin_link, badge, shortened


class ReadOnlyAdmin(PMAdmin):
    """PMs look; nobody adds or edits here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class StageInline(ReadOnlyInline):
    model = BurnInStage
    fields = ["position", "name", "status", "reason", "started_at", "ended_at"]
    readonly_fields = fields


class FindingInline(ReadOnlyInline):
    model = Finding
    fields = ["severity", "code", "subject", "message", "waived_by", "waived_at", "waiver_reason"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("waived_by")


def _count(severity: str, **extra: Any) -> Count:
    return Count("findings", filter=Q(findings__severity=severity, **extra))


@admin.register(BurnInRun)
class BurnInRunAdmin(ReadOnlyAdmin):
    list_display = [
        "server_link",
        "purpose",
        "started_at",
        "ended_at",
        "result_badge",
        "fails",
        "unwaived_fails",
        "warnings",
        "infos",
    ]
    list_filter = ["purpose", "result", "rules_version"]
    search_fields = ["server__hostname", "server__asset_tag", "report_id"]
    list_select_related = ["server"]
    show_full_result_count = False
    date_hierarchy = "started_at"
    # The raw report is served only through access-checked routes, never as a bare media link.
    fields = [
        "server",
        "purpose",
        "accepted_at",
        "report_id",
        "probe_version",
        "schema_version",
        "started_at",
        "ended_at",
        "result",
        "rules_version",
        "uploaded_by",
        "created_at",
    ]
    inlines = [StageInline, FindingInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(
                fail_count=_count(Severity.FAIL),
                unwaived_fail_count=_count(Severity.FAIL, findings__waived_at__isnull=True),
                warn_count=_count(Severity.WARN),
                info_count=_count(Severity.INFO),
            )
        )

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, run: BurnInRun) -> str:
        return admin_link(run.server, run.server.hostname)

    @admin.display(description="Result", ordering="result")
    def result_badge(self, run: BurnInRun) -> str:
        return badge(run.result, run.get_result_display())

    @admin.display(description="fail", ordering="fail_count")
    def fails(self, run: BurnInRun) -> int:
        return run.fail_count  # type: ignore[attr-defined]

    @admin.display(description="fail, not waived", ordering="unwaived_fail_count")
    def unwaived_fails(self, run: BurnInRun) -> int:
        return run.unwaived_fail_count  # type: ignore[attr-defined]

    @admin.display(description="warn", ordering="warn_count")
    def warnings(self, run: BurnInRun) -> int:
        return run.warn_count  # type: ignore[attr-defined]

    @admin.display(description="info", ordering="info_count")
    def infos(self, run: BurnInRun) -> int:
        return run.info_count  # type: ignore[attr-defined]


class WaivedFilter(admin.SimpleListFilter):
    title = "waived"
    parameter_name = "waived"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Waived"), ("no", "Not waived")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in {"yes", "no"}:
            return queryset.filter(waived_at__isnull=self.value() == "no")
        return queryset


@admin.register(Finding)
class FindingAdmin(ReadOnlyAdmin):
    list_display = ["server", "severity_badge", "code", "subject", "short_message", "waived", "waived_by"]
    list_filter = ["severity", WaivedFilter, "code"]
    search_fields = ["run__server__hostname", "run__server__asset_tag", "code", "subject", "message"]
    list_select_related = ["run__server", "waived_by"]
    show_full_result_count = False
    fields = [
        "run",
        "code",
        "severity",
        "subject",
        "gpu_index",
        "message",
        "evidence",
        "rule_version",
        "waived_by",
        "waived_at",
        "waiver_reason",
    ]
    actions = ["waive"]

    @admin.display(description="server", ordering="run__server__hostname")
    def server(self, finding: Finding) -> str:
        return admin_link(finding.run.server, finding.run.server.hostname)

    @admin.display(description="severity", ordering="severity")
    def severity_badge(self, finding: Finding) -> str:
        return badge(finding.severity, finding.get_severity_display())

    @admin.display(description="message")
    def short_message(self, finding: Finding) -> str:
        return shortened(finding.message, 40)

    @admin.display(description="waived", boolean=True)
    def waived(self, finding: Finding) -> bool:
        return finding.waived

    @admin.action(description="Waive the selected findings (with a written reason)")
    def waive(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        reason = request.POST.get("waiver_reason", "").strip()
        if "apply" not in request.POST or not reason:
            return TemplateResponse(
                request,
                "admin/burnin/finding/waive.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Waive findings",
                    "findings": queryset,
                    "action": request.POST.get("action"),
                    "missing_reason": "apply" in request.POST,
                    "opts": self.model._meta,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )
        self.run_for_each(
            request,
            queryset,
            lambda finding: finding_waive(finding=finding, actor=request.user, reason=reason),
            "waived",
        )
        return None
