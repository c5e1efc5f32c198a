"""What an order's export carries of the warranty (see werkbank/exports.py): the handover packs of the
order's servers with their PDF and ZIP, the warranty registrations and records (with their replacement
lineage), and the records' claims and expiry notices."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from warranty.models import (
        ExpiryNotice,
        HandoverPack,
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
