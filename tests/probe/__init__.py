"""Tests of the stdlib-only GPU probe (no Django, no database)."""
