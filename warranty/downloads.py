"""The pack and certificate files as HTTP answers, for the API and the portal alike. The caller has looked
the pack or order up through `visible_to` already (another tenant's is a 404 before this runs)."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpResponse
from django.utils import timezone

from orders.models import Order
from warranty.choices import PackLanguage, PackStatus
from warranty.documents import certificate_pdf
from warranty.models import HandoverPack
from warranty.selectors import certificate_servers, warranty_rows

CONTENT_TYPES = {"pdf": "application/pdf", "zip": "application/zip"}


def pack_file_response(pack: HandoverPack, kind: str) -> FileResponse:
    """The pack's PDF or ZIP (`kind`) as an attachment; 404 while the pack has no stored file (not ready,
    or the moment between the commit that made it ready and the file's write)."""
    field = pack.pdf if kind == "pdf" else pack.zip
    if pack.status != PackStatus.READY or not field.name:
        raise Http404(
            f"Pack r{pack.revision} of {pack.server.asset_tag} is {pack.status}: it has no {kind} yet."
        )
    try:
        handle = field.open("rb")
    except FileNotFoundError as missing:
        raise Http404(f"Pack r{pack.revision}'s {kind} is being stored; try again in a moment.") from missing
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=f"{pack.server.asset_tag}-handover-r{pack.revision}-{pack.language}.{kind}",
        content_type=CONTENT_TYPES[kind],
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


def certificate_response(order: Order, *, language: str | None) -> HttpResponse:
    """The order's warranty certificate as a PDF attachment, in `language` (en or de; anything else: the
    customer's language)."""
    customer_language = order.customer.language
    if language not in PackLanguage.values:
        language = customer_language if customer_language in PackLanguage.values else PackLanguage.EN
    rows = warranty_rows(servers=certificate_servers(order=order))
    content = certificate_pdf(order, rows, language=language, issued_on=timezone.localdate())
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{order.reference}-warranty-certificate.pdf"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
