"""Portal downloads as CSV: the customer's warranty list, and a server's serials by slot.

Each file holds the rows of its page, built by the page's own function (`record_rows`, `slot_rows`), so it
carries exactly the fields portal/customer.py lists for that page, less the links: the warranty list as
looked up (a `serial` narrows it as on the page), all of it rather than one page of it, and the serials of
one server the customer may see (another customer's server is a 404, as its page is).
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.translation import gettext as _

from portal import selectors
from portal.views.access import customer_required
from portal.views.customer import slot_rows
from portal.views.warranty import record_rows
from warranty.selectors import records_for
from werkbank.spreadsheets import csv_response


def _state_labels() -> dict[str, str]:
    return {
        "active": _("Active"),
        "expired": _("Expired"),
        "replaced": _("Replaced"),
    }


@customer_required
def warranty_records_csv(request: HttpRequest) -> HttpResponse:
    """The customer's warranty records (or the one serial looked up), as on /portal/warranty/."""
    records = record_rows(records_for(user=request.user, serial=request.GET.get("serial", "")))
    states = _state_labels()
    return csv_response(
        "warranty-records.csv",
        [_("Serial"), _("What"), _("Server"), _("Start"), _("End"), _("Status")],
        (
            [
                record["serial"],
                record["description"],
                record["hostname"],
                record["start_date"].isoformat(),
                record["end_date"].isoformat(),
                states[record["state"]],
            ]
            for record in records
        ),
    )


@customer_required
def server_serials_csv(request: HttpRequest, server_id: int) -> HttpResponse:
    """One server's serial numbers by slot, as on its page."""
    server = selectors.customer_server(request.user, server_id)
    if server is None:
        raise Http404("No such server.")
    return csv_response(
        f"serials-{server.hostname}.csv",
        [_("Slot"), _("Kind"), _("Category"), _("Manufacturer"), _("Part"), _("Serial number")],
        (
            [slot["slot"], slot["kind"], slot["category"], slot["manufacturer"], slot["part"], slot["serial"]]
            for slot in slot_rows(server)
        ),
    )


urlpatterns: list[URLPattern] = [
    path("warranty/records.csv", warranty_records_csv, name="warranty-csv"),
    path("servers/<int:server_id>/serials.csv", server_serials_csv, name="server-serials-csv"),
]
