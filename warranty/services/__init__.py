"""Warranty services: every write of the warranty app, one module per concern.

Every service is atomic, locks what it changes, and writes an audit event in the same transaction. Callers
import from this package; the modules are `registrations` (the warranty registered in the customer's name
at allocation), `records` (one record per serial at handover), `handover` (a server to its customer, and
the order that closes with its last server), `claims` (RMA with replacement lineage, and the drafts a drift
finding makes), `attachments` (the logs and photos of a claim, checked by their content), `expiry` (the
daily digests), `packs` (handover packs: the PDF and ZIP rendered by a Celery task), `supplier_returns`
(failed components back to their suppliers), `digest` (the PMs' weekly warranty digest) and `attribution`
(what caused each failure: proposed, confirmed or corrected).
"""

from warranty.services.attachments import Upload, claim_attach
from warranty.services.attribution import (
    attribute_blacklist,
    attribute_claim,
    attribute_run,
    attribution_confirm,
)
from warranty.services.claims import (
    claim_approve,
    claim_close,
    claim_confirm,
    claim_dismiss,
    claim_draft_from_finding,
    claim_draft_notice_send,
    claim_open,
    claim_reject,
    claim_ship_replacement,
)
from warranty.services.digest import pm_digest_send
from warranty.services.expiry import expiry_notice_send, expiry_notify
from warranty.services.handover import handover_records_create, server_hand_over
from warranty.services.packs import pack_generate, pack_progress, pack_render, pack_request, pack_retry
from warranty.services.records import warranty_records_create
from warranty.services.registrations import registrations_record
from warranty.services.supplier_returns import (
    supplier_return_close,
    supplier_return_open,
    supplier_return_ship,
)

__all__ = [
    "Upload",
    "attribute_blacklist",
    "attribute_claim",
    "attribute_run",
    "attribution_confirm",
    "claim_approve",
    "claim_attach",
    "claim_close",
    "claim_confirm",
    "claim_dismiss",
    "claim_draft_from_finding",
    "claim_draft_notice_send",
    "claim_open",
    "claim_reject",
    "claim_ship_replacement",
    "expiry_notice_send",
    "expiry_notify",
    "handover_records_create",
    "pack_generate",
    "pack_progress",
    "pack_render",
    "pack_request",
    "pack_retry",
    "pm_digest_send",
    "registrations_record",
    "server_hand_over",
    "supplier_return_close",
    "supplier_return_open",
    "supplier_return_ship",
    "warranty_records_create",
]
