"""The admin's placement form (deployment.admin): a server into a rack, drawing from feeds of that rack.

Every feed is named with its rack and site ("Sofia / R1 · PDU-A (230 V × 32 A × 1)"), since two racks often
have a feed of the same name. Once a rack is chosen (on the form, or by `?rack=<id>` in the add page's
address), the feeds offered are that rack's only: on the page by a static script
(deployment/static/deployment/placement_feeds.js, which reads each option's `data-rack`), and on the server
by `clean`, which refuses a feed of another rack naming it and its rack, never an id.

The phase each chosen feed's PSU group draws from is typed as "PDU-A: L2, PDU-B: L1" (`phases`): a feed
left out draws from L1 (on a three-phase feed recorded as assumed, for review). `PlacementPhasesForm` is
the admin's page to correct or confirm the phases of a placement (`placement_set_phases`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from builds.models import Server
from deployment.choices import Phase, RackFace
from deployment.models import PowerFeed, Rack, RackPlacement
from deployment.phases import phases_of


def feed_label(feed: PowerFeed) -> str:
    """A feed named with its rack and site."""
    return f"{feed.rack.site.name} / {feed.rack.name} · {feed}"


class FeedSelect(forms.SelectMultiple):
    """A multiple select whose options carry their feed's rack (`data-rack`), for the script to filter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.racks: dict[str, int] = {}

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        rack = self.racks.get(str(value))
        if rack is not None:
            option["attrs"]["data-rack"] = str(rack)
        return option


class FeedChoiceField(forms.ModelMultipleChoiceField):
    widget = FeedSelect

    def label_from_instance(self, obj: PowerFeed) -> str:
        return feed_label(obj)


def normalize_phase(text: str) -> str:
    """ "l1 + l2" → "L1+L2": the spelling of `Phase` values, from what a person types."""
    return "".join(text.split()).upper()


def parse_phases(text: str, feeds: list[PowerFeed]) -> dict[int, str]:
    """ "PDU-A: L2, PDU-B: L1+L3" → {feed id: phase} among `feeds`; a ValidationError names what is wrong (a
    feed not among them, a phase the feed does not have, a feed named twice)."""
    by_name = {feed.name.casefold(): feed for feed in feeds}
    phases: dict[int, str] = {}
    for item in (part.strip() for part in text.replace(";", ",").split(",")):
        if not item:
            continue
        name, colon, value = item.rpartition(":")
        feed = by_name.get(name.strip().casefold()) if colon else None
        if feed is None:
            names = ", ".join(feed.name for feed in feeds) or "none"
            raise forms.ValidationError(
                f"{item!r} does not name one of the chosen feeds ({names}) as FEED: PHASE, e.g. "
                f'"{feeds[0].name if feeds else "PDU-A"}: L2".'
            )
        if feed.pk in phases:
            raise forms.ValidationError(f"Feed {feed.name} is named twice.")
        phase, allowed = normalize_phase(value), phases_of(feed)
        if phase not in allowed:
            raise forms.ValidationError(
                f"Feed {feed.name} has no phase {value.strip()!r}: it has {', '.join(allowed)}."
            )
        phases[feed.pk] = phase
    return phases


class PlacementForm(forms.ModelForm):
    feeds = FeedChoiceField(
        queryset=PowerFeed.objects.none(),
        help_text="The chosen rack's feeds the server draws from (hold Ctrl or ⌘ to pick more than one).",
        error_messages={"invalid_choice": "One of the chosen feeds no longer exists: pick the feeds again."},
    )
    phases = forms.CharField(
        required=False,
        max_length=500,
        help_text="The phase(s) of each chosen feed the server's PSU group draws from, e.g. "
        '"PDU-A: L2, PDU-B: L2" or "A1: L1+L2+L3". A feed left out draws from L1 (on a three-phase feed '
        "recorded as assumed and listed for review).",
    )

    class Meta:
        model = RackPlacement
        fields = [
            "server",
            "rack",
            "lowest_u",
            "face",
            "feeds",
            "phases",
            "measured_wall_w",
            "power_override_reason",
        ]
        labels = {"power_override_reason": "Override reason"}
        help_texts = {
            "power_override_reason": "Only when a circuit would carry more than its continuous limit: "
            "why a PM accepts it.",
            "lowest_u": "The lowest U the server occupies; its height comes from the configuration's "
            "chassis.",
        }

    class Media:
        js = ["deployment/placement_feeds.js"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        server = self.fields.get("server")
        if isinstance(server, forms.ModelChoiceField):
            server.queryset = Server.objects.filter(placement__isnull=True).order_by("hostname")
        feeds = PowerFeed.objects.select_related("rack__site").order_by(
            "rack__site__name", "rack__name", "name"
        )
        rack = self._chosen_rack()
        if rack is not None and not self.is_bound:
            feeds = feeds.filter(rack=rack)  # the add page opened for one rack: only its feeds
        field = self.fields["feeds"]
        assert isinstance(field, FeedChoiceField) and isinstance(field.widget, FeedSelect)
        field.queryset = feeds
        field.widget.racks = {str(feed.pk): feed.rack_id for feed in feeds}

    def _chosen_rack(self) -> Rack | None:
        value = self.data.get("rack") if self.is_bound else self.initial.get("rack")
        if isinstance(value, Rack):
            return value
        try:
            return Rack.objects.filter(pk=int(str(value))).first() if value not in (None, "") else None
        except ValueError:
            return None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        rack, feeds = data.get("rack"), data.get("feeds")
        if rack is not None and feeds:
            strangers = [feed for feed in feeds if feed.rack_id != rack.pk]
            if strangers:
                names = ", ".join(feed_label(feed) for feed in strangers)
                self.add_error(
                    "feeds",
                    f"{names} {'is not a feed' if len(strangers) == 1 else 'are not feeds'} of rack "
                    f"{rack.site.name} / {rack.name}: pick among its own feeds.",
                )
        data["phase_map"] = {}
        if feeds and not self.has_error("feeds"):
            try:
                data["phase_map"] = parse_phases(data.get("phases") or "", list(feeds))
            except forms.ValidationError as error:
                self.add_error("phases", error)
        return data


class PlacementPhasesForm(forms.Form):
    """The phases of one placement, one choice per feed it draws from (that feed's phases only), and the
    reason a PM accepts a circuit over its limit. Saved through `placement_set_phases`."""

    override_reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Only when a feed or a phase would carry more than its continuous limit: why a PM "
        "accepts it.",
    )

    def __init__(self, *args: Any, placement: RackPlacement, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.links = list(placement.feed_links.select_related("powerfeed").order_by("powerfeed__name"))
        fields = {}
        for link in self.links:
            feed = link.powerfeed
            fields[f"phase_{feed.pk}"] = forms.ChoiceField(
                label=f"{feed} · phase",
                choices=[(value, value) for value in phases_of(feed)],
                initial=link.phase,
                help_text="Assumed L1 (nobody chose it): confirm or correct." if link.phase_assumed else "",
            )
        self.fields = {**fields, **self.fields}

    def phases(self) -> dict[int, str]:
        """Feed id → the chosen phase."""
        return {link.powerfeed_id: self.cleaned_data[f"phase_{link.powerfeed_id}"] for link in self.links}


class FeedIdsField(forms.Field):
    """The ids of the checked feeds (checkboxes named "feeds"). Which of them are the rack's is the service's
    rule (`placement_create` refuses another rack's feed, naming it and its rack)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        try:
            return [int(each) for each in value or []]
        except (TypeError, ValueError):
            raise forms.ValidationError(_("Pick the feeds among this rack's feeds.")) from None

    def validate(self, value: Any) -> None:
        if self.required and not value:
            raise forms.ValidationError(self.error_messages["required"], code="required")


class ElevationPlacementForm(forms.Form):
    """The rack page's placing form (a PM): a server, its lowest U and face (filled by a click on the
    elevation, or typed), the rack's feeds each with the phase(s) it draws from, and the measured wall power.
    The override reason counts only where a circuit would be over its continuous limit. Every rule is the
    service's (`placement_create`); the form only reads the values."""

    server = forms.IntegerField(label=_("Server"), error_messages={"required": _("Pick a server to place.")})
    lowest_u = forms.IntegerField(
        label=_("Lowest U"), error_messages={"required": _("Click a free U on the elevation, or type it.")}
    )
    face = forms.ChoiceField(label=_("Face"), choices=RackFace.choices, initial=RackFace.FRONT)
    feeds = FeedIdsField(
        label=_("Power feeds"), error_messages={"required": _("Pick at least one of the rack's feeds.")}
    )
    measured_wall_w = forms.IntegerField(label=_("Measured wall power (W)"), required=False)
    override_reason = forms.CharField(
        label=_("Override reason"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, rack: Rack, rack_feeds: list[PowerFeed], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rack_feeds = rack_feeds
        self.fields["lowest_u"].widget.attrs.update({"min": 1, "max": rack.height_u})
        for feed in rack_feeds:
            self.fields[f"phase_{feed.pk}"] = forms.CharField(required=False, initial=Phase.L1.value)

    def phases(self) -> dict[int, str]:
        """Feed id → the phase(s) chosen for it, for the checked feeds of the rack."""
        chosen = set(self.cleaned_data.get("feeds") or [])
        return {
            feed.pk: self.cleaned_data.get(f"phase_{feed.pk}") or Phase.L1.value
            for feed in self.rack_feeds
            if feed.pk in chosen
        }

    def feed_rows(self, rack: Rack) -> list[dict[str, Any]]:
        """Each feed of the rack as the form shows it: named with the rack, checked or not, and its phases."""
        checked = {str(each) for each in self["feeds"].value() or []}
        rows = []
        for feed in self.rack_feeds:
            phase = self[f"phase_{feed.pk}"].value() or Phase.L1.value
            rows.append(
                {
                    "feed": feed,
                    "label": f"{rack.site.name} / {rack.name} · {feed}",
                    "checked": str(feed.pk) in checked,
                    "phase_name": f"phase_{feed.pk}",
                    "phase": phase,
                    "phases": phases_of(feed),
                }
            )
        return rows
