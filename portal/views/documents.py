"""Portal pages: documents. A customer downloads the handover packs of its servers and the warranty
certificate of its orders.

Every download looks its object up through `visible_to` first: another customer's pack or order is a 404,
and so is a pack that has no file yet; an anonymous visitor is sent to the login page, and a user who is
no customer member gets a 404 (portal/views/access.py). The server page
(portal/views/customer.py) shows the documents block when its context has `show_documents`:
`documents_context(request, server)` gives that block's context.
"""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse

from builds.models import Server
from orders.models import Order
from portal.customer import row
from portal.views.access import customer_required
from warranty.choices import PACK_PENDING, PackStatus
from warranty.downloads import certificate_response, pack_file_response
from warranty.selectors import server_packs, visible_packs
from werkbank.access import Purpose


def documents_context(request: HttpRequest, server: Server) -> dict[str, Any]:
    """The context of templates/portal/_server_documents.html for one server the user may see: its ready
    packs (newest revision first, each with its download links and SHA-256) and the order's certificate."""
    every = server_packs(user=request.user, server=server)
    packs = [pack for pack in every if pack.status == PackStatus.READY]
    newest = packs[0].revision if packs else 0
    return {
        "show_documents": True,
        # A revision being made after the newest ready one: after the handover, the one with warranty dates.
        "pack_coming": any(pack.revision > newest and pack.status in PACK_PENDING for pack in every),
        "handover_packs": [
            row(
                "server.pack",
                newest=pack.revision == newest,
                revision=pack.revision,
                language=pack.get_language_display(),
                generated_at=pack.finished_at,
                pdf_url=reverse("portal:pack-pdf", args=[pack.pk]),
                zip_url=reverse("portal:pack-zip", args=[pack.pk]),
                zip_sha256=pack.zip_sha256,
            )
            for pack in packs
        ],
        "certificate_url": reverse("portal:certificate", args=[server.order_id]),
    }


def _download(request: HttpRequest, pk: int, kind: str) -> FileResponse:
    pack = get_object_or_404(visible_packs(request.user).select_related("server"), pk=pk)
    return pack_file_response(pack, kind)


@customer_required
def pack_pdf(request: HttpRequest, pk: int) -> FileResponse:
    """A handover pack's PDF, for whoever may see the pack."""
    return _download(request, pk, "pdf")


@customer_required
def pack_zip(request: HttpRequest, pk: int) -> FileResponse:
    """A handover pack's ZIP, for whoever may see the pack."""
    return _download(request, pk, "zip")


@customer_required
def certificate(request: HttpRequest, pk: int) -> HttpResponse:
    """The warranty certificate of an order the user may see, in the customer's language."""
    order = get_object_or_404(
        Order.objects.visible_to(request.user, purpose=Purpose.VIEW).select_related("customer"), pk=pk
    )
    return certificate_response(order, language=request.GET.get("language") or request.LANGUAGE_CODE)


urlpatterns: list[URLPattern] = [
    path("packs/<int:pk>/handover.pdf", pack_pdf, name="pack-pdf"),
    path("packs/<int:pk>/handover.zip", pack_zip, name="pack-zip"),
    path("orders/<int:pk>/warranty-certificate.pdf", certificate, name="certificate"),
]
