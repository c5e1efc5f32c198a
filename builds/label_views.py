"""The bench's label downloads: the server's label and the label of a component installed in it."""

from __future__ import annotations

import re

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views import View

from builds.labels import server_label_pdf
from builds.models import Installation
from builds.views import ServerPageMixin
from inventory.selectors import component_label_pdf


def _pdf(data: bytes, filename: str) -> HttpResponse:
    # A serial is printed text: anything but letters, digits, dot and dash is replaced in the file name.
    safe = re.sub(r"[^A-Za-z0-9.-]+", "_", filename)
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{safe}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


class ServerLabelView(ServerPageMixin, View):
    """GET: the server's 62 × 29 mm label (asset tag as QR code), for a label printer."""

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        return _pdf(server_label_pdf(server=self.server), f"label-{self.server.hostname}.pdf")


class ComponentLabelView(ServerPageMixin, View):
    """GET: the 62 × 29 mm label of the component in one of this server's current installations; an
    installation of another server, or one that ended, is a 404."""

    def get(self, request: HttpRequest, pk: int, installation_pk: int) -> HttpResponse:
        installation = (
            Installation.objects.visible_to(request.user)
            .select_related("component__part", "component__lot", "component__po_line__purchase_order")
            .active()
            .filter(server=self.server, pk=installation_pk)
            .first()
        )
        if installation is None:
            raise Http404(_("No such component in this server."))
        component = installation.component
        return _pdf(component_label_pdf(component=component), f"label-{component.serial}.pdf")
