"""Portal pages: warranty. A customer looks up serials, reads a record with its lineage and claims, and
files a claim, with logs and photos, attaching more while the claim is in progress. Everything goes through
`visible_to`: another customer's serial is "not found" (an empty lookup, a 404 on a record or a claim), and
a user who is no customer member gets a 404 on every page (portal/views/access.py). Writes call the
warranty services (POST, then redirect); the files are checked there, by their content."""

from __future__ import annotations

from datetime import date
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from builds.models import Server
from burnin.models import Finding
from portal.customer import pager, row
from portal.views.access import customer_required
from warranty.choices import CLAIM_OPEN, AttachmentKind, ClaimStatus, RecordKind
from warranty.models import ClaimAttachment, WarrantyClaim, WarrantyRecord
from warranty.selectors import attachment_download_url, claim_for, claims_of, record_for, records_for
from warranty.services import Upload, claim_attach, claim_open
from werkbank.errors import DomainError, InvalidInput


def _state(record: WarrantyRecord, today: date) -> str:
    """A record's state as the badge shows it: replaced (a replacement took its place), expired, active."""
    if record.replaced_at:
        return "replaced"
    return "expired" if record.end_date < today else "active"


def _record_url(pk: int) -> str:
    return reverse("portal:warranty-record", args=[pk])


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
                state=_state(record, today),
                url=_record_url(record.pk),
            )
            for record in records
        ],
    }


def _lineage(record: WarrantyRecord | None) -> dict[str, Any] | None:
    """The other end of a replacement: its serial and its page (None: there is none)."""
    if record is None:
        return None
    return row("warranty.lineage", serial=record.serial, url=_record_url(record.pk))


def _figure(value: Any, unit: Any) -> str | None:
    """A drift finding's baseline or new figure in the reader's language (decimal comma in German): a
    number with its unit, or a link as the probe names it ("Gen4 x16"). None for what has no short form
    (the analysis' codes, a missing card's whole baseline): the finding's sentence says it."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = formats.number_format(value, decimal_pos=None if float(value).is_integer() else 1)
        return f"{number} {unit}" if unit else str(number)
    return value if isinstance(value, str) else None


def _drift(finding: Finding | None) -> dict[str, Any] | None:
    """What a customer reads of the drift finding a claim was drafted from (None: filed by a person)."""
    if finding is None:
        return None
    evidence = finding.evidence if isinstance(finding.evidence, dict) else {}
    return row(
        "warranty.drift",
        subject=finding.subject_text,
        text=finding.text,
        run_date=finding.run.started_at,
        baseline=_figure(evidence.get("baseline"), evidence.get("unit")),
        value=_figure(evidence.get("value"), evidence.get("unit")),
    )


def _attachment_rows(attachments: list[ClaimAttachment]) -> list[dict[str, Any]]:
    # Not who uploaded it (a login name): the file's name, what it is, its size and the download.
    return [
        row(
            "warranty.attachment",
            name=attachment.original_name,
            kind=attachment.kind,
            kind_label=AttachmentKind(attachment.kind).label,
            size_bytes=attachment.size_bytes,
            url=attachment_download_url(attachment.pk),
        )
        for attachment in attachments
    ]


def _claim_rows(
    claims: list[WarrantyClaim], attach: AttachForm | None = None, attach_to: int | None = None
) -> list[dict[str, Any]]:
    # Not who opened it (a login name) nor the notes of its transitions (the PM's, in the audit trail):
    # the decision note is the one text of the builder's a customer reads. A claim in progress offers the
    # form that attaches more files (`attach`, with its errors, on the claim it was sent for).
    return [
        row(
            "warranty.claim",
            number=claim.number,
            attachments=_attachment_rows(list(claim.attachments.all())),
            attach_url=reverse("portal:warranty-claim-attach", args=[claim.pk])
            if claim.status in CLAIM_OPEN
            else "",
            attach_form=attach
            if attach is not None and claim.pk == attach_to
            else AttachForm(prefix=f"claim-{claim.pk}"),
            created_at=claim.created_at,
            status=claim.status,
            status_label=ClaimStatus(claim.status).label,
            description=claim.description,
            decision_note=claim.decision_note,
            replacement=_lineage(claim.replacement_record),
            drift=_drift(claim.finding),
        )
        for claim in claims
    ]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class FilesField(forms.FileField):
    """Several files from one input, none required; the service checks each one's content."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(FilesField, self).clean(item, initial) for item in files]


ATTACHMENT_HELP = gettext_lazy(
    "Logs as plain text, .log, .gz or .zip; photos as JPEG, PNG or WebP. Checked by their content."
)


class ClaimForm(forms.Form):
    description = forms.CharField(
        label=gettext_lazy("What is wrong?"),
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=gettext_lazy("Describe the fault: what happens, since when, and what you have tried."),
    )
    attachments = FilesField(label=gettext_lazy("Logs and photos"), required=False, help_text=ATTACHMENT_HELP)


class AttachForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Attach a log or a photo"), help_text=ATTACHMENT_HELP)


def _add_error(form: forms.Form, exc: DomainError) -> None:
    """A service's refusal on the form: a bad input on its field (when the form has it), else on top."""
    if isinstance(exc, InvalidInput) and exc.field in form.fields:
        form.add_error(exc.field, exc.field_message)
    else:
        form.add_error(None, exc.message)


def record_rows(records: Any) -> list[dict[str, Any]]:
    """The rows of the warranty list (its page and its CSV download)."""
    today = timezone.localdate()
    return [
        row(
            "warranty.row",
            serial=record.serial,
            description=record.description,
            hostname=record.server.hostname,
            start_date=record.start_date,
            end_date=record.end_date,
            state=_state(record, today),
            url=_record_url(record.pk),
        )
        for record in records
    ]


class WarrantyListView(View):
    """The customer's records, paginated, with a lookup box by serial."""

    paginate_by = 50

    def get(self, request: HttpRequest) -> TemplateResponse:
        serial = request.GET.get("serial", "").strip()
        page = Paginator(records_for(user=request.user, serial=serial), self.paginate_by).get_page(
            request.GET.get("page")
        )
        return TemplateResponse(
            request,
            "portal/warranty_list.html",
            {"serial": serial, "records": record_rows(page.object_list), "pager": pager(page)},
        )


class WarrantyRecordView(View):
    """One record: its dates, its lineage both ways, its claims, and the form to file a claim."""

    def record(self, request: HttpRequest, pk: int) -> WarrantyRecord:
        record = record_for(user=request.user, pk=pk)
        if record is None:
            raise Http404(_("No such warranty record."))
        return record

    def render(
        self,
        request: HttpRequest,
        record: WarrantyRecord,
        form: ClaimForm,
        status: int = 200,
        *,
        attach: AttachForm | None = None,
        attach_to: int | None = None,
    ) -> Any:
        today = timezone.localdate()
        claims = list(
            claims_of(user=request.user, record=record)
            .select_related("replacement_record", "finding__run")
            .prefetch_related("attachments")
        )
        # `replaced_by` is the reverse side of a one-to-one: absent, reading it raises.
        replaced_by = getattr(record, "replaced_by", None)
        context = {
            "record": row(
                "warranty.record",
                serial=record.serial,
                description=record.description,
                hostname=record.server.hostname,
                asset_tag=record.server.asset_tag,
                order_reference=record.order.reference,
                start_date=record.start_date,
                term_months=record.term_months,
                end_date=record.end_date,
                state=_state(record, today),
                replaced_at=record.replaced_at,
            ),
            "replaces": _lineage(record.replaces),
            "replaced_by": _lineage(replaced_by),
            "claims": _claim_rows(claims, attach, attach_to),
            "form": form,
            # The form is offered while a claim could be opened: on a component's record whose warranty
            # runs, not replaced, with no claim in progress (the service says the same with a 409).
            "can_claim": record.kind == RecordKind.COMPONENT
            and record.replaced_at is None
            and record.end_date >= today
            and not any(claim.status in CLAIM_OPEN for claim in claims),
        }
        return TemplateResponse(request, "portal/warranty_record.html", context, status=status)

    def get(self, request: HttpRequest, pk: int) -> Any:
        return self.render(request, self.record(request, pk), ClaimForm())

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        record = self.record(request, pk)
        form = ClaimForm(request.POST, request.FILES)
        if not form.is_valid():
            return self.render(request, record, form, status=400)
        try:
            claim = claim_open(
                record=record,
                actor=request.user,
                description=form.cleaned_data["description"],
                attachments=[Upload.of(upload) for upload in form.cleaned_data["attachments"]],
            )
        except DomainError as exc:
            _add_error(form, exc)
            return self.render(request, record, form, status=exc.status_code)
        messages.success(
            request, _("Claim %(number)s is filed. We will answer it here.") % {"number": claim.number}
        )
        return HttpResponseRedirect(_record_url(record.pk))


class ClaimAttachView(View):
    """POST: attach a log or a photo to a claim in progress, then back to its record's page (with the
    refusal on the claim's form, and the service's status, when the file is refused)."""

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        claim = claim_for(user=request.user, pk=pk)
        if claim is None:
            raise Http404(_("No such claim."))
        form = AttachForm(request.POST, request.FILES, prefix=f"claim-{claim.pk}")
        page = WarrantyRecordView()
        if not form.is_valid():
            return page.render(request, claim.record, ClaimForm(), 400, attach=form, attach_to=claim.pk)
        try:
            attachment = claim_attach(
                claim=claim, actor=request.user, upload=Upload.of(form.cleaned_data["file"])
            )
        except DomainError as exc:
            _add_error(form, exc)
            return page.render(
                request, claim.record, ClaimForm(), exc.status_code, attach=form, attach_to=claim.pk
            )
        messages.success(
            request,
            _("%(name)s is attached to claim %(number)s.")
            % {"name": attachment.original_name, "number": claim.number},
        )
        return HttpResponseRedirect(_record_url(claim.record_id))


urlpatterns: list[URLPattern] = [
    path("warranty/", customer_required(WarrantyListView.as_view()), name="warranty"),
    path(
        "warranty/records/<int:pk>/", customer_required(WarrantyRecordView.as_view()), name="warranty-record"
    ),
    path(
        "warranty/claims/<int:pk>/attachments/",
        customer_required(ClaimAttachView.as_view()),
        name="warranty-claim-attach",
    ),
]
