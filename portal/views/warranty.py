"""Portal pages: warranty. A customer looks up serials, reads a record with its lineage and claims, and
files a claim. Everything goes through `visible_to`: another customer's serial is "not found" (an empty
lookup, a 404 on a record). Writes call the warranty services (POST, then redirect)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.generic import ListView

from builds.models import Server
from portal.customer import row
from warranty.choices import CLAIM_OPEN, RecordKind
from warranty.models import WarrantyRecord
from warranty.selectors import claims_of, record_for, records_for
from warranty.services import claim_open
from werkbank.errors import DomainError, InvalidInput


def _state(record: WarrantyRecord, today: Any) -> str:
    if record.replaced_at:
        return "replaced"
    return "expired" if record.end_date < today else "active"


def warranty_context(request: HttpRequest, server: Server) -> dict[str, Any]:
    """The context of templates/portal/_server_warranty.html: the server's warranty records the user may see
    (one per serial, the server's own first), each with its state and a link to its page."""
    today = timezone.localdate()
    records = records_for(user=request.user).filter(server=server).order_by("-kind", "serial", "pk")
    return {
        "show_warranty": True,
        "warranty_records": [
            row(
                "server.warranty",
                serial=record.serial,
                description=record.description,
                start_date=record.start_date,
                end_date=record.end_date,
                state="replaced"
                if record.replaced_at
                else "expired"
                if record.end_date < today
                else "active",
                url=reverse("portal:warranty-record", args=[record.pk]),
            )
            for record in records
        ],
    }


class ClaimForm(forms.Form):
    description = forms.CharField(
        label=gettext_lazy("What is wrong?"),
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=gettext_lazy("Describe the fault: what happens, since when, and what you have tried."),
    )


class WarrantyListView(LoginRequiredMixin, ListView):
    """The customer's records, paginated, with a lookup box by serial."""

    template_name = "portal/warranty_list.html"
    context_object_name = "records"
    paginate_by = 50

    def get_queryset(self) -> Any:
        return records_for(user=self.request.user, serial=self.request.GET.get("serial", ""))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(
            serial=self.request.GET.get("serial", "").strip(), today=timezone.localdate(), **kwargs
        )


class WarrantyRecordView(LoginRequiredMixin, View):
    """One record: its dates, its lineage both ways, its claims, and the form to file a claim."""

    def record(self, request: HttpRequest, pk: int) -> WarrantyRecord:
        record = record_for(user=request.user, pk=pk)
        if record is None:
            raise Http404(_("No such warranty record."))
        return record

    def render(self, request: HttpRequest, record: WarrantyRecord, form: ClaimForm, status: int = 200) -> Any:
        today = timezone.localdate()
        claims = list(claims_of(user=request.user, record=record).select_related("replacement_record"))
        context = {
            "record": record,
            "claims": claims,
            "form": form,
            # The form is offered while a claim could be opened: on a component's record whose warranty
            # runs, not replaced, with no claim in progress (the service says the same with a 409).
            "can_claim": record.kind == RecordKind.COMPONENT
            and record.replaced_at is None
            and record.end_date >= today
            and not any(claim.status in CLAIM_OPEN for claim in claims),
            "today": today,
        }
        return TemplateResponse(request, "portal/warranty_record.html", context, status=status)

    def get(self, request: HttpRequest, pk: int) -> Any:
        return self.render(request, self.record(request, pk), ClaimForm())

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        record = self.record(request, pk)
        form = ClaimForm(request.POST)
        if not form.is_valid():
            return self.render(request, record, form, status=400)
        try:
            claim = claim_open(
                record=record, actor=request.user, description=form.cleaned_data["description"]
            )
        except DomainError as exc:
            if isinstance(exc, InvalidInput):
                form.add_error("description", exc.field_message)
            else:
                form.add_error(None, exc.message)
            return self.render(request, record, form, status=exc.status_code)
        messages.success(
            request, _("Claim %(number)s is filed. We will answer it here.") % {"number": claim.number}
        )
        return HttpResponseRedirect(reverse("portal:warranty-record", args=[record.pk]))


urlpatterns: list[URLPattern] = [
    path("warranty/", WarrantyListView.as_view(), name="warranty"),
    path("warranty/records/<int:pk>/", WarrantyRecordView.as_view(), name="warranty-record"),
]
