"""Template helpers shared by every page of the frame: the status badge.

A status is shown the same way everywhere: its word, a symbol and a colour by its tone, so it never rests on
colour alone (the symbol and the word carry it in print and for colour-blind readers).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html

register = template.Library()

#: Tone per status value, across the apps (orders, servers, burn-in, findings, packs, claims).
TONES: dict[str, str] = {
    # done, good
    "approved": "ok",
    "ok": "ok",  # a burn-in stage that finished
    "burn_in_passed": "ok",
    "passed": "ok",
    "pass": "ok",
    "deployed": "ok",
    "handed_over": "ok",
    "closed": "ok",
    "ready": "ok",
    "received": "ok",
    "waived": "ok",
    "replacement_shipped": "ok",
    "active": "ok",
    "installed": "ok",  # a component in its server
    "verified": "ok",  # a platform listing
    # stopped, wrong
    "rejected": "bad",
    "cancelled": "bad",
    "burn_in_failed": "bad",
    "failed": "bad",
    "fail": "bad",
    "blacklisted": "bad",
    "stale": "bad",  # a burn-in run measured on other hardware
    "expired": "bad",
    "scrapped": "bad",
    # needs a look
    "warn": "warn",
    "roi_review": "warn",
    "open": "warn",
    "incomplete": "warn",
    "interrupted": "warn",
    "partially_received": "warn",
    "expiring": "warn",
    "rma": "warn",  # a component at the manufacturer
    # under way
    "procurement": "info",
    "assembly": "info",
    "assembling": "info",
    "assembled": "info",
    "burn_in": "info",
    "deployment": "info",
    "running": "info",
    "queued": "info",
    "ordered": "info",
    "replaced": "info",
    "allocated": "info",
    "sent": "info",  # a purchase order on its way
}
SYMBOLS = {"ok": "✓", "bad": "✕", "warn": "!", "info": "›", "neutral": "·"}


def tone(value: object) -> str:
    return TONES.get(str(value), "neutral")


@register.simple_tag
def status_badge(value: object, label: object = None) -> str:
    """`{% status_badge order.status order.get_status_display %}`: a badge with symbol, word and colour."""
    kind = tone(value)
    return format_html(
        '<span class="badge badge-{}" data-status="{}"><span aria-hidden="true">{}</span> {}</span>',
        kind,
        value,
        SYMBOLS[kind],
        label if label is not None else value,
    )


@register.filter
def status_tone(value: object) -> str:
    """The tone of a status ("ok", "bad", "warn", "info", "neutral"), for a class name."""
    return tone(value)
