"""The admin's placement form (deployment/admin.py): a server into a rack, drawing from feeds of that rack.

Every feed is named with its rack and site ("Sofia / R1 · PDU-A (230 V × 32 A × 1)"), since two racks often
have a feed of the same name. Once a rack is chosen (on the form, or by `?rack=<id>` in the add page's
address), the feeds offered are that rack's only: on the page by a static script
(deployment/static/deployment/placement_feeds.js, which reads each option's `data-rack`), and on the server
by `clean`, which refuses a feed of another rack naming it and its rack, never an id.
"""

from __future__ import annotations

from typing import Any

from django import forms

from builds.models import Server
from deployment.models import PowerFeed, Rack, RackPlacement


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


class PlacementForm(forms.ModelForm):
    feeds = FeedChoiceField(
        queryset=PowerFeed.objects.none(),
        help_text="The chosen rack's feeds the server draws from (hold Ctrl or ⌘ to pick more than one).",
        error_messages={"invalid_choice": "One of the chosen feeds no longer exists: pick the feeds again."},
    )

    class Meta:
        model = RackPlacement
        fields = ["server", "rack", "lowest_u", "face", "feeds", "measured_wall_w", "power_override_reason"]
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
        return data
