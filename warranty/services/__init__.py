"""Warranty services: every write of the warranty app, one module per concern (`packs`: handover packs)."""
