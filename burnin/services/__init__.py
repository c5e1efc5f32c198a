"""Burn-in services, one module per concern: `upload` (a probe report's body read, identified and
validated), `ingest` (the report bound to the server's hardware, stored and analysed in one transaction),
`samples` (its telemetry rows, by COPY) and `gate` (waivers, and passing or failing a server's burn-in).
Import from the modules."""
