"""The placement admin's phase parts (deployment.admin): the "Phase to review" filter, each feed link with
its phase, the page that corrects or confirms a placement's phases, and the action that confirms the
recorded ones. Both write through `placement_set_phases`, so the circuit check (in all and per phase) and
the audit row are the service's.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from deployment.forms import PlacementPhasesForm
from deployment.models import PlacementFeed, RackPlacement
from deployment.services import placement_set_phases
from werkbank.admin import ReadOnlyInline
from werkbank.errors import DomainError, RuleViolation


def with_links(placements: QuerySet) -> QuerySet:
    """`placements` with their feed links and feeds, in one query more."""
    links = PlacementFeed.objects.select_related("powerfeed")
    return placements.prefetch_related(Prefetch("feed_links", links))


def feed_phases(placement: RackPlacement) -> str:
    """ "A1 L1, B1 L2 (assumed)": each feed of a placement with its phase, from the prefetched links."""
    links = sorted(placement.feed_links.all(), key=lambda link: link.powerfeed.name)
    named = [f"{link.powerfeed.name} {link.phase}{' (assumed)' * link.phase_assumed}" for link in links]
    return ", ".join(named) or "—"


class PhaseReviewFilter(admin.SimpleListFilter):
    """Placements with a feed link whose phase nobody chose (set to L1 by the migration, or left out on a
    three-phase feed)."""

    title = "Phase to review"
    parameter_name = "phase_review"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Phase assumed: review"), ("no", "Phases chosen")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        assumed = Exists(PlacementFeed.objects.filter(rackplacement=OuterRef("pk"), phase_assumed=True))
        if self.value() == "yes":
            return queryset.filter(assumed)
        if self.value() == "no":
            return queryset.exclude(assumed)
        return queryset


class PlacementFeedInline(ReadOnlyInline):
    """The feeds of a placement with the phase each draws from, and whether it was assumed."""

    model = PlacementFeed
    fields = ["powerfeed", "phase", "phase_assumed"]
    readonly_fields = ["powerfeed", "phase", "phase_assumed"]
    verbose_name = "Feed and phase"
    verbose_name_plural = "Feeds and phases"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("powerfeed__rack")


class PlacementPhasesMixin:
    """For RackPlacementAdmin: the phases page (`<id>/phases/`), a link to it, and the confirm action."""

    def get_urls(self) -> list[Any]:
        admin_site: Any = self.admin_site  # type: ignore[attr-defined]
        urls: list[Any] = super().get_urls()  # type: ignore[misc]
        return [
            path(
                "<int:object_id>/phases/",
                admin_site.admin_view(self.phases_view),
                name="deployment_rackplacement_phases",
            ),
            *urls,
        ]

    @admin.display(description="Phases")
    def phase_links(self, obj: RackPlacement) -> str:
        url = reverse("admin:deployment_rackplacement_phases", args=[obj.pk])
        return format_html('{} · <a href="{}">Correct or confirm the phases</a>', feed_phases(obj), url)

    def phases_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        placement = (
            RackPlacement.objects.select_related("server", "rack__site")
            .prefetch_related("feed_links__powerfeed")
            .filter(pk=object_id)
            .first()
        )
        if placement is None:
            raise Http404("No such placement.")
        model_admin: Any = self
        form = PlacementPhasesForm(request.POST or None, placement=placement)
        if request.method == "POST" and form.is_valid():
            try:
                placement_set_phases(
                    placement=placement,
                    phases=form.phases(),
                    actor=request.user,
                    override_reason=form.cleaned_data["override_reason"],
                )
            except DomainError as error:
                model_admin.message_user(request, error.message, messages.ERROR)
                for item in error.missing if isinstance(error, RuleViolation) else []:
                    model_admin.message_user(request, item, messages.WARNING)
            else:
                model_admin.message_user(
                    request, f"{placement.server.hostname}: the phases are recorded.", messages.SUCCESS
                )
                return HttpResponseRedirect(
                    reverse("admin:deployment_rackplacement_change", args=[placement.pk])
                )
        context = {
            **model_admin.admin_site.each_context(request),
            "title": f"Phases of {placement.server.hostname}",
            "opts": RackPlacement._meta,
            "placement": placement,
            "form": form,
        }
        return TemplateResponse(request, "admin/deployment/rackplacement/phases.html", context)

    @admin.action(description="Confirm the recorded phases of the selected placements")
    def confirm_phases(self, request: HttpRequest, queryset: QuerySet) -> None:
        model_admin: Any = self
        model_admin.run_for_each(
            request,
            list(queryset.select_related("server")),
            lambda placement: placement_set_phases(placement=placement, phases={}, actor=request.user),
            "phases confirmed",
        )
