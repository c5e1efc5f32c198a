"""The German catalogue is complete: every string has a real translation, none is fuzzy, and the compiled
catalogue is the one Django loads (a missing `make venv` step would leave the pages in English)."""

from __future__ import annotations

from pathlib import Path

from babel.messages.pofile import read_po
from django.conf import settings
from django.utils import translation

PO = Path(settings.BASE_DIR) / "locale" / "de" / "LC_MESSAGES" / "django.po"


def _catalogue():
    with PO.open("rb") as handle:
        return read_po(handle, locale="de")


def test_every_message_has_a_german_translation_and_none_is_fuzzy() -> None:
    catalogue = _catalogue()
    messages = [message for message in catalogue if message.id]
    assert len(messages) > 200
    untranslated = [message.id for message in messages if not message.string or not all(message.string)]
    fuzzy = [message.id for message in messages if message.fuzzy]
    assert untranslated == []
    assert fuzzy == []


def test_the_compiled_catalogue_is_loaded() -> None:
    with translation.override("de"):
        assert translation.gettext("Log out") == "Abmelden"
        assert translation.gettext("Warranty") == "Garantie"
