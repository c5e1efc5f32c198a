"""What an order's export carries of the warranty (see werkbank/exports.py): the handover packs of the
order's servers with their PDF and ZIP, the warranty registrations and records (with their replacement
lineage), the records' claims with their attachments (each with its file) and expiry notices, and the
attributions of the servers' failures. Not the supplier returns (our business with a supplier, about stock
that is no order's) nor the PMs' digests."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from warranty.models import (
        Attribution,
        ClaimAttachment,
        ExpiryNotice,
        HandoverPack,
        PmDigest,
        SupplierReturn,
        WarrantyClaim,
        WarrantyRecord,
        WarrantyRegistration,
    )

    for model in (HandoverPack, WarrantyRegistration, WarrantyRecord):
        exports.carry(
            model, found=lambda record, model=model: model.objects.filter(server__order=record.order)
        )
    for model in (WarrantyClaim, ExpiryNotice):
        exports.carry(
            model,
            found=lambda record, model=model: model.objects.filter(record__in=record.pks(WarrantyRecord)),
        )
    # A claim's logs and photos travel with it, their files too (the exporter carries a row's FileFields).
    exports.carry(
        ClaimAttachment,
        found=lambda record: ClaimAttachment.objects.filter(claim__in=record.pks(WarrantyClaim)),
    )
    exports.carry(Attribution, found=lambda record: Attribution.objects.filter(server__order=record.order))
    exports.leave_out(
        SupplierReturn,
        reason="warranty.SupplierReturn rows (returns of failed components to their suppliers: our business "
        "with the supplier, about stock that belongs to no order)",
    )
    exports.leave_out(
        PmDigest,
        reason="warranty.PmDigest rows (the log of the PMs' weekly digests: which week was sent to whom)",
    )
