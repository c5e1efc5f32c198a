"""Admin for project managers. Only PMs may use it; every write goes through a service."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import localtime

from werkbank.access import is_pm
from werkbank.admin_io import ListExportMixin
from werkbank.errors import DomainError
from werkbank.models import AuditEvent, Membership, Organization
from werkbank.services import (
    membership_add,
    membership_remove,
    organization_create,
    organization_update,
    user_access,
    user_access_record,
)
from werkbank.templatetags.werkbank import status_badge

# The app list of the index and the breadcrumbs lead everywhere; the nav sidebar beside every page took about
# 300 px of a 1,400 px screen from the change lists, which then hid their key columns (issue #14).
admin.site.enable_nav_sidebar = False


# --- list cells shared by every app's admin (werkbank/static/werkbank/admin.css draws them) -----------------


def badge(value: object, label: object = None) -> SafeString:
    """A status in the shared colours: symbol, word and tone, as on the PM, bench and portal pages."""
    return SafeString(status_badge(value, label))


def admin_link(obj: Model | None, text: object = None) -> str:
    """A link to the object's change page in this admin, or a dash when there is none."""
    if obj is None:
        return "—"
    try:
        url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    except NoReverseMatch:  # a model without an admin: its name only
        return str(text if text is not None else obj)
    return format_html('<a href="{}">{}</a>', url, text if text is not None else obj)


def shortened(text: object, limit: int = 40) -> str:
    """A long text cut to one line, the whole of it in the title (hover), so rows stay one line high."""
    value = "" if text is None else str(text)
    if not value:
        return "—"
    if len(value) <= limit:
        return value
    return format_html('<span class="wb-short" title="{}">{}…</span>', value, value[: limit - 1].rstrip())


def day(value: Any) -> str:
    """A timestamp as its local date ("2026-12-01"), the full time in the title: a narrow list column."""
    if value is None:
        return "—"
    return _time(value, full="%Y-%m-%d %H:%M %Z", shown="%Y-%m-%d")


def minute(value: Any) -> str:
    """A timestamp to the minute, local ("2026-12-01 17:26"), for ledgers where the hour matters."""
    if value is None:
        return "—"
    return _time(value, full="%Y-%m-%d %H:%M:%S %Z", shown="%Y-%m-%d %H:%M")


def _time(value: Any, *, full: str, shown: str) -> str:
    local = localtime(value)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        value.isoformat(),
        local.strftime(full),
        local.strftime(shown),
    )


def progress(done: int, total: int, words: str) -> str:
    """A small bar and its words, e.g. "3 / 8 assembled" (a <progress> element: no inline style)."""
    return format_html(
        '<span class="wb-progress"><progress value="{}" max="{}"></progress> {} / {} {}</span>',
        done,
        max(total, 1),
        done,
        total,
        words,
    )


class PMAdmin(ListExportMixin, admin.ModelAdmin):
    """Base admin: visible to PMs only, no deletes (history stays), service errors shown as messages, and
    the change list exported as CSV or XLSX (werkbank/admin_io.py)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_pm(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return is_pm(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().changeform_view(request, *args, **kwargs)
        except DomainError as exc:
            # The admin's own transaction has rolled back: nothing was written.
            self.message_user(request, exc.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def run_for_each(self, request: HttpRequest, objects: Any, call: Any, done: str) -> None:
        """Run a service on each selected object: each success or refusal becomes one message."""
        for obj in objects:
            try:
                call(obj)
            except DomainError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"{obj}: {done}.", messages.SUCCESS)

    @staticmethod
    def changed_values(form: Any) -> dict[str, Any]:
        return {name: form.cleaned_data[name] for name in form.changed_data if name in form.cleaned_data}


class SharedChoicesInline(admin.TabularInline):
    """An editable inline whose foreign-key selects read their choices once per page, not once per row."""

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            # Each row's form copies the field, and each copy would run the query again when drawn; a list
            # of choices is copied instead. Validation still looks the chosen value up in the queryset.
            field.choices = list(field.choices)
        return field


class ReadOnlyInline(admin.TabularInline):
    """Rows a PM looks at beside their parent but never edits here (history, lines written by services)."""

    extra = 0
    can_delete = False

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


def audit_timeline(obj: Model) -> str:
    """The object's audit events as an HTML table, oldest first."""
    events = AuditEvent.objects.for_object(obj).select_related("actor")
    if not events:
        return "—"
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                f"{event.created_at:%Y-%m-%d %H:%M:%S %Z}",
                event.actor.get_username() if event.actor_id else "system",
                event.verb,
                ", ".join(
                    f"{key}: {event.before.get(key, '—')} → {value}" for key, value in event.after.items()
                ),
                event.note,
            )
            for event in events
        ),
    )
    return format_html(
        '<table class="audit-timeline"><thead><tr><th>When</th><th>Who</th><th>What</th><th>Change</th>'
        "<th>Note</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


class MembershipInline(SharedChoicesInline):
    model = Membership
    extra = 1
    fields = ["user", "role"]

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)


@admin.register(Organization)
class OrganizationAdmin(PMAdmin):
    list_display = ["name", "kind", "contact_email", "language", "created_at"]
    list_filter = ["kind", "language"]
    search_fields = ["name", "contact_email"]
    readonly_fields = ["timeline"]
    inlines = [MembershipInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        return ["kind", "timeline"] if obj else ["timeline"]

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Organization) -> str:
        return audit_timeline(obj) if obj.pk else "—"

    def save_model(self, request: HttpRequest, obj: Organization, form: Any, change: bool) -> None:
        if change:
            organization_update(organization=obj, actor=request.user, **self.changed_values(form))
        else:
            created = organization_create(
                actor=request.user,
                **{key: form.cleaned_data[key] for key in ("name", "kind", "contact_email", "language")},
            )
            obj.pk = created.pk

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        formset.save(commit=False)  # sorts the forms into new, changed and deleted; writes nothing
        for inline_form in formset.forms:
            data = getattr(inline_form, "cleaned_data", None)
            if not data or data.get("DELETE") or data.get("id"):
                continue
            membership_add(
                actor=request.user, organization=form.instance, user=data["user"], role=data["role"]
            )
        for membership in formset.deleted_objects:
            membership_remove(actor=request.user, membership=membership)


@admin.register(AuditEvent)
class AuditEventAdmin(PMAdmin):
    list_display = ["created", "actor", "verb", "short_object", "short_note"]
    list_filter = ["verb", "content_type"]
    search_fields = ["object_repr", "verb", "note"]
    date_hierarchy = "created_at"
    # Every change writes a row: newest first by the key, never counted in full.
    ordering = ["-pk"]
    show_full_result_count = False

    @admin.display(description="When", ordering="created_at")
    def created(self, obj: AuditEvent) -> str:
        return minute(obj.created_at)

    @admin.display(description="Object", ordering="object_repr")
    def short_object(self, obj: AuditEvent) -> str:
        return shortened(obj.object_repr, 40)

    @admin.display(description="Note")
    def short_note(self, obj: AuditEvent) -> str:
        return shortened(obj.note, 40)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("actor", "content_type")


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class WerkbankUserAdmin(ListExportMixin, UserAdmin):
    """PMs add members and other PMs; only a superuser grants superuser status or raw permissions."""

    inlines = []

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_pm(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return is_pm(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return is_pm(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return is_pm(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        readonly = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            readonly += ["is_superuser", "user_permissions"]
        return readonly

    # Access changes are audited (issue #16): the access before the save is read from the database in
    # save_model, and compared once save_related has saved the groups (a many-to-many, saved last).
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        stored = type(obj)._default_manager.filter(pk=obj.pk).first() if change else None
        request._werkbank_access_before = user_access(stored) if stored is not None else None
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        user_access_record(
            actor=request.user, user=form.instance, before=getattr(request, "_werkbank_access_before", None)
        )
