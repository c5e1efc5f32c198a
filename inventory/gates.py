"""Quality checks on purchasing, registered by the apps above (pm.quality), which inventory must not import.

A check answers with sentences, each with its figures ("Lot L-2291 of RTX 5090: 3 of 8 failed, 95 % interval
13.7–69.4 %"); no sentence: nothing to say. The PO's pages show them; `po_send` refuses a PO with any until
a PM gives an override reason (as for a non-EU supplier); a receipt answers with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inventory.models import Part, PurchaseOrder, Supplier

PurchaseOrderCheck = Callable[["PurchaseOrder"], list[str]]
ReceiptCheck = Callable[["Part", "Supplier", str], list[str]]

_po_checks: list[PurchaseOrderCheck] = []
_receipt_checks: list[ReceiptCheck] = []


def register_po_check(check: PurchaseOrderCheck) -> PurchaseOrderCheck:
    """Add `check(po)`; registering the same function twice keeps one (AppConfig.ready may run twice)."""
    if check not in _po_checks:
        _po_checks.append(check)
    return check


def register_receipt_check(check: ReceiptCheck) -> ReceiptCheck:
    """Add `check(part, supplier, lot_code)`, once."""
    if check not in _receipt_checks:
        _receipt_checks.append(check)
    return check


def po_quality_warnings(po: PurchaseOrder) -> list[str]:
    """Every registered check's sentences about `po`'s supplier and parts."""
    return [sentence for check in _po_checks for sentence in check(po)]


def receipt_quality_warnings(*, part: Part, supplier: Supplier, lot_code: str) -> list[str]:
    """Every registered check's sentences about receiving `lot_code` of `part` from `supplier`."""
    return [sentence for check in _receipt_checks for sentence in check(part, supplier, lot_code)]
