"""Warranty forms: they check the shape of the input; what it means is the selectors' and documents' job."""

from __future__ import annotations

import re
import zipfile
from typing import Any

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class VerifyForm(forms.Form):
    """The public page /verify/: a pack's SHA-256, or the pack's ZIP itself (one of the two).

    The ZIP is bounded like the bench's photos: refused above `WERKBANK_MAX_PACK_UPLOAD_BYTES`, and refused
    unless it is a ZIP at all, before anything reads its members.
    """

    sha256 = forms.CharField(
        label=_("SHA-256 of the pack's ZIP"),
        required=False,
        max_length=200,  # room for spaces or a line break pasted with it; the hash itself is 64
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "spellcheck": "false", "class": "mono", "inputmode": "text"}
        ),
    )
    pack = forms.FileField(
        label=_("or the pack's ZIP file"),
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )

    def clean_sha256(self) -> str:
        value = "".join((self.cleaned_data.get("sha256") or "").split()).lower()
        if value and not SHA256_HEX.fullmatch(value):
            raise forms.ValidationError(
                _("A SHA-256 is 64 hexadecimal characters (0–9, a–f); this has %(count)s characters.")
                % {"count": len(value)}
            )
        return value

    def clean_pack(self) -> Any:
        upload = self.cleaned_data.get("pack")
        if not upload:
            return None
        limit = settings.WERKBANK_MAX_PACK_UPLOAD_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                _("%(name)s is %(size)s bytes; a pack's ZIP may have at most %(limit)s bytes.")
                % {"name": upload.name, "size": f"{upload.size:,}", "limit": f"{limit:,}"}
            )
        is_zip = zipfile.is_zipfile(upload)
        upload.seek(0)
        if not is_zip:
            raise forms.ValidationError(_("%(name)s is not a ZIP file.") % {"name": upload.name})
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        if data.get("sha256") and data.get("pack"):
            raise forms.ValidationError(_("Enter a SHA-256 or choose a ZIP file, not both."))
        if not data.get("sha256") and not data.get("pack"):
            raise forms.ValidationError(_("Enter a pack's SHA-256 or choose its ZIP file."))
        return data
