"""The fleet's quality fed back into procurement and the bench (issue #29, "Back into procurement"), through
the registries the apps below offer (pm/apps.py registers these):

- `po_check` (`inventory.gates.register_po_check`): for each line of a PO, its supplier's row for the line's
  part category and the line's part row; each flagged one says its figures. `po_send` then refuses the PO
  until a PM gives a quality override reason; `procure` writes the sentences into its audit row.
- `receipt_check` (`register_receipt_check`): the lot ``(part, lot code)`` being received into, when
  flagged (a lot code that reappears on a new receipt joins the old one's history).
- `blacklist_proposals` (`builds.proposals.register_blacklist_proposals`): a layout's flagged connector
  positions, by connector name, proposed for blacklisting on new builds.

A row without failures is never flagged (its interval's lower bound is 0), so the purchasing checks first
ask, in one cheap query over the attributions, whether any of their rows has a failure at all, and compute
the rows (one aggregate query each) only for those: a PO of a clean supplier costs one query. The bench's
proposals always compute the layout's positions (two queries), so the bench page's count does not change
with the first blacklisting. The sentences are the rows' own (`QualityRow.sentence`), with their figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q

from pm.quality.selectors import layout_positions, quality_row
from warranty.choices import FailureCause
from warranty.models import Attribution

if TYPE_CHECKING:
    from builds.models import ChassisLayout
    from inventory.models import Part, PurchaseOrder, Supplier


def po_check(po: PurchaseOrder) -> list[str]:
    """The flagged rows of the PO's supplier (per part category of its lines) and of its lines' parts."""
    parts = {line.part_id: line.part.category for line in po.lines.select_related("part")}
    if not parts:
        return []
    failing = set(
        Attribution.objects.filter(cause=FailureCause.COMPONENT)
        .filter(
            Q(component__lot__supplier_id=po.supplier_id, component__part__category__in=set(parts.values()))
            | Q(component__part_id__in=parts)
        )
        .values_list("component__lot__supplier_id", "component__part__category", "component__part_id")
        .distinct()
    )
    categories = {category for supplier, category, _ in failing if supplier == po.supplier_id}
    failing_parts = {part for _, _, part in failing if part in parts}
    keys = [("suppliers", f"{po.supplier_id}:{category}") for category in sorted(categories)]
    keys += [("parts", str(part)) for part in sorted(failing_parts)]
    sentences = []
    for kind, key in keys:
        row = quality_row(kind, key)
        if row is not None and row.flagged:
            sentences.append(f"{row.sentence()}.")
    return sentences


def receipt_check(part: Part, supplier: Supplier, lot_code: str) -> list[str]:
    """The lot ``(part, lot code)`` across its receipts, when flagged."""
    failed = Attribution.objects.filter(
        cause=FailureCause.COMPONENT, component__part_id=part.pk, component__lot__lot_code=lot_code
    )
    if not failed.exists():
        return []
    row = quality_row("lots", f"{part.pk}:{lot_code}")
    return [f"{row.sentence()}."] if row is not None and row.flagged else []


def blacklist_proposals(layout: ChassisLayout) -> dict[str, str]:
    """The layout's flagged connector positions: {connector name: the figures}. Always two queries, with
    or without failures (the bench page's count stays the same as its server's build goes on)."""
    proposals = {}
    for row in layout_positions(layout.pk):
        if row.flagged:
            _, _, name = row.key.partition(":")
            proposals[name] = f"{row.sentence()}."
    return proposals
