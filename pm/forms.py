"""Forms of the PM's pages: the input of each order transition, as the API's serializers take it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from orders.choices import REASON_REQUIRED
from werkbank.choices import OrganizationKind
from werkbank.models import Organization


class TransitionForm(forms.Form):
    """An optional note on the transition, written on its audit row."""

    note = forms.CharField(
        label=_("Note"), required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )


class ReasonForm(forms.Form):
    """Reject and cancel ask for a written reason."""

    reason = forms.CharField(label=_("Reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class ApproveForm(TransitionForm):
    """Approval: a note, and a written reason to override failed gate checks."""

    override_reason = forms.CharField(
        label=_("Override reason"),
        required=False,
        max_length=4000,
        help_text=_("Only to approve despite failed checks: why the order may go ahead anyway."),
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class ProcureForm(TransitionForm):
    """Procurement: a note, and optionally the partner workshop the purchase orders are delivered to."""

    deliver_to = forms.ModelChoiceField(
        label=_("Deliver to"),
        queryset=Organization.objects.none(),
        required=False,
        empty_label=_("Our own warehouse"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["deliver_to"].queryset = Organization.objects.filter(
            kind=OrganizationKind.PARTNER
        ).order_by("name")


def transition_form(action: str, data: Any = None, **kwargs: Any) -> forms.Form:
    """The form of one transition, bound to `data` when given."""
    form_class: type[forms.Form] = {"approve": ApproveForm, "procure": ProcureForm}.get(
        action, ReasonForm if action in REASON_REQUIRED else TransitionForm
    )
    return form_class(data, prefix=action, **kwargs)


class AssignPartnerForm(forms.Form):
    """Assign partner: the partner, and one server of the order (none: every open build)."""

    partner = forms.ModelChoiceField(label=_("Assembly partner"), queryset=Organization.objects.none())
    server = forms.ModelChoiceField(
        label=_("Server"),
        queryset=Organization.objects.none(),
        required=False,
        empty_label=_("Every open build of the order"),
    )

    def __init__(self, *args: Any, order: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["partner"].queryset = Organization.objects.filter(kind=OrganizationKind.PARTNER).order_by(
            "name"
        )
        self.fields["server"].queryset = order.servers.order_by("sequence")
        self.fields["server"].label_from_instance = lambda server: server.hostname


class ServerNoteForm(forms.Form):
    """A server step's optional note, written on its audit row."""

    note = forms.CharField(label=_("Note"), required=False, max_length=2000)
