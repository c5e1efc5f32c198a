"""The fields of the PM's warranty report and of the spares near their supplier warranty's end, for the
audience table (test_audiences.py); beside audience_fields_rig.py, which is full."""

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
