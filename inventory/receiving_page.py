"""The receiving page of a purchase order: its lines, and a receipt form per open line that books the
scanned or pasted serials into one lot, all or nothing, through `po_line_receive` (as the API's
`receive`).

One view class and one template (inventory/po_receive.html) serve two pages: the PM's
(`pm:po-receive`, pm/views/receiving.py) and the bench's for the partner whose workshop the PO is
delivered to (`bench:po-receive`, builds/receiving_views.py). Each subclass says who gets there and
where "back" leads; the purchase order is looked up through `visible_to(user, purpose=RECEIVE)`, so a PO
outside the user's view is a 404. A refusal re-renders the page with the service's sentences, each bad
serial with its message, and the service's status (400 bad input, 409 a rule not met); nothing is
written. A receipt that went through redirects (303) with a message, and the lot's quality warnings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib import messages
from django.db.models import F, QuerySet, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views import View

from inventory.choices import RECEIVABLE
from inventory.forms import ReceiptForm
from inventory.models import BatchLot, PurchaseOrder, PurchaseOrderLine
from inventory.packing import COLUMN_ALIASES, SERIAL, SERIAL_PATTERN, PackingList
from inventory.services import po_line_receive
from werkbank.access import Purpose
from werkbank.errors import InvalidInput, RuleViolation

#: How many purchase orders the bench list shows under "Deliveries to receive" (newest first).
DELIVERIES_SHOWN = 20

#: The serial rule for the page's script: inventory.packing.SERIAL_PATTERN in JavaScript's spelling.
SERIAL_PATTERN_JS = SERIAL_PATTERN.pattern.replace(r"\Z", "$")
#: A packing-list CSV's column names, and those of its serial column, for the script's count of a paste.
CSV_COLUMNS = " ".join(COLUMN_ALIASES)
SERIAL_COLUMNS = " ".join(name for name, column in COLUMN_ALIASES.items() if column == SERIAL)


def deliveries_to_receive(user: Any) -> list[PurchaseOrder]:
    """The purchase orders delivered to a workshop that `user` receives for, with something still open on
    them (`open_quantity`), newest first: one query, at most DELIVERIES_SHOWN."""
    return list(
        PurchaseOrder.objects.visible_to(user, purpose=Purpose.RECEIVE)
        .filter(status__in=RECEIVABLE, deliver_to__isnull=False)
        .annotate(open_quantity=Sum(F("lines__quantity") - F("lines__quantity_received")))
        .filter(open_quantity__gt=0)
        .select_related("supplier", "deliver_to")
        .order_by("-created_at", "-id")[:DELIVERIES_SHOWN]
    )


def _row_errors(error: InvalidInput, packing: PackingList) -> list[dict[str, Any]]:
    """The service's row errors, each with the serial of its row as the user gave it (a row that did not
    parse into a serial, and a file-level error, have none)."""
    serials = {row.row: row.serial for row in packing.rows}
    return [{**row, "serial": serials.get(row.get("row") or 0)} for row in error.rows]


class ReceivePageView(View):
    """GET: the purchase order's lines and a receipt form per open line. POST: one receipt on one line."""

    template_name = "inventory/po_receive.html"
    #: The page's URL name, for the forms' action and the redirect after a receipt.
    url_name: ClassVar[str]

    def purchase_orders(self, request: HttpRequest) -> QuerySet[PurchaseOrder]:
        """The purchase orders this page receives on for the user; subclasses may narrow them."""
        return PurchaseOrder.objects.visible_to(request.user, purpose=Purpose.RECEIVE)

    def back_link(self, po: PurchaseOrder) -> tuple[str, str]:
        """Where the page's "back" link leads, and its words."""
        raise NotImplementedError

    def get_purchase_order(self, request: HttpRequest, pk: int) -> PurchaseOrder:
        po = self.purchase_orders(request).select_related("supplier", "deliver_to").filter(pk=pk).first()
        if po is None:
            raise Http404(_("No such purchase order to receive on."))
        return po

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self.render_page(request, self.get_purchase_order(request, pk))

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        po = self.get_purchase_order(request, pk)
        line_pk = request.POST.get("line", "")
        line = (
            PurchaseOrderLine.objects.visible_to(request.user, purpose=Purpose.RECEIVE)
            .select_related("part")
            .filter(purchase_order=po, pk=int(line_pk))
            .first()
            if line_pk.isascii() and line_pk.isdigit()
            else None
        )
        if line is None:
            raise Http404(_("No such line on this purchase order."))
        form = ReceiptForm(request.POST, prefix=f"line-{line.pk}")
        refusal: dict[str, Any] | None = None
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                receipt = po_line_receive(
                    line=line,
                    actor=request.user,
                    lot_code=data["lot"],
                    date_code=data["date_code"],
                    origin=data["origin"],
                    packing=form.packing,
                )
            except RuleViolation as error:
                refusal = {"message": error.message, "missing": error.missing, "rows": []}
                status = error.status_code
            except InvalidInput as error:
                if error.field in form.fields and not error.rows:
                    form.add_error(error.field, error.field_message)
                else:
                    rows = _row_errors(error, form.packing)
                    refusal = {"message": error.field_message, "missing": [], "rows": rows}
                status = error.status_code
            else:
                count = len(receipt.components)
                messages.success(
                    request,
                    ngettext(
                        "Received %(count)d serial into lot %(lot)s.",
                        "Received %(count)d serials into lot %(lot)s.",
                        count,
                    )
                    % {"count": count, "lot": receipt.lot.lot_code},
                )
                for warning in receipt.quality_warnings:
                    messages.warning(request, warning)
                return HttpResponseRedirect(reverse(self.url_name, args=[po.pk]), status=303)
        # Nothing was written (the service is atomic): the page as it is, the refusal at its line's form.
        return self.render_page(request, po, bound=(line.pk, form, refusal), status=status)

    def render_page(
        self,
        request: HttpRequest,
        po: PurchaseOrder,
        *,
        bound: tuple[int, ReceiptForm, dict[str, Any] | None] | None = None,
        status: int = 200,
    ) -> HttpResponse:
        lines = list(po.lines.select_related("part").order_by("id"))
        lots = list(
            BatchLot.objects.filter(purchase_order=po)
            .select_related("part")
            .with_component_count(request.user)
            .order_by("-created_at", "-id")
        )
        receivable = po.status in RECEIVABLE
        rows = []
        for line in lines:
            form = refusal = None
            if receivable and line.remaining > 0:
                if bound is not None and bound[0] == line.pk:
                    form, refusal = bound[1], bound[2]
                else:
                    # No lot is filled in from an earlier receipt: a new box may hold another lot.
                    form = ReceiptForm(prefix=f"line-{line.pk}")
            rows.append({"line": line, "form": form, "refusal": refusal})
        back_url, back_label = self.back_link(po)
        context = {
            "po": po,
            "rows": rows,
            "lots": lots,
            "receivable": receivable,
            "open_total": sum(line.remaining for line in lines),
            "action_url": reverse(self.url_name, args=[po.pk]),
            "back_url": back_url,
            "back_label": back_label,
            "serial_pattern": SERIAL_PATTERN_JS,
            "csv_columns": CSV_COLUMNS,
            "serial_columns": SERIAL_COLUMNS,
        }
        return TemplateResponse(request, self.template_name, context, status=status)
