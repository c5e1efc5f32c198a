"""The fields of the PM's warranty report, of the spares near their supplier warranty's end and of a claim's
attachments, for the audience table (test_audiences.py); beside audience_fields_rig.py, which is full."""

#: A row of the PM's warranty report (warranty/api/report.py): every customer's records, PMs only.
REPORT_RECORD = {
    "id", "kind", "serial", "description", "customer", "customer_name", "server", "server_hostname", "order",
    "order_reference", "start_date", "term_months", "end_date", "days_left",
}  # fmt: skip
#: A spare in stock near the end of its supplier warranty (the same module).
SPARE_ENDING = {
    "component", "serial", "part", "mpn", "part_name", "supplier", "supplier_name", "lot", "lot_code",
    "received_at", "supplier_warranty_months", "supplier_warranty_ends", "days_left", "ended",
}  # fmt: skip
#: A claim's logs and photos (warranty/api/serializers.py), nested in the claim as `attachments`.
CLAIM_ATTACHMENT = {
    "id", "kind", "content_type", "original_name", "size_bytes", "sha256", "uploaded_by", "uploaded_at",
    "download_url",
}  # fmt: skip
CLAIM_FILES = {"attachments", *(f"attachments[].{key}" for key in CLAIM_ATTACHMENT)}
CLAIM_FILES_INTERNAL = {"attachments[].uploaded_by"}  # a login name, as who opened the claim
#: A circuit's load per phase (deployment/api/serializers.py FeedLoadSerializer, issue #28): beside FEED_LOAD.
PHASED = {"imbalance_percent", "phase_loads"} | {
    f"phase_loads[].{key}" for key in ("phase", "load_w", "limit_w", "percent_of_limit", "ok")
}
