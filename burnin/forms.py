"""Forms of the burn-in page's gate: they check the shape of the input; the rules are the services'
(`burnin.services.gate`)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

#: As the API's ReasonSerializer and NoteSerializer (werkbank/api/serializers.py).
MAX_TEXT = 2000


class GateReasonForm(forms.Form):
    """A PM's written reason: failing a server's burn-in, or waiving a finding. The audit row keeps it."""

    reason = forms.CharField(
        label=_("Reason"),
        max_length=MAX_TEXT,
        error_messages={"required": _("A written reason is required.")},
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class GateNoteForm(forms.Form):
    """An optional note on passing a server's burn-in."""

    note = forms.CharField(
        label=_("Note"),
        max_length=MAX_TEXT,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
