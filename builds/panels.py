"""Sections that the apps above builds add to the bench's server page, which builds may not import.

An app registers, in its `AppConfig.ready()`, a named panel (`register_panel`): a function of the user and
the server that returns the template to include and its context, or None where it has nothing to show
(burnin adds the server's health history after the handover). The bench view asks every panel and includes
what they answer, in the order they were registered. A panel reads a fixed number of queries, and only
the server it is given: the page has already checked that the user may see it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from builds.models import Server
from werkbank.types import Actor


@dataclass(frozen=True)
class Panel:
    """A section of the server page: the template to include, with these variables beside the page's."""

    name: str
    template: str
    context: dict[str, Any]


PanelSource = Callable[[Actor, Server], Panel | None]

_PANELS: dict[str, PanelSource] = {}


def register_panel(name: str, source: PanelSource) -> None:
    """Register the panel `name`; the same name again replaces it (a `ready()` that runs twice adds
    nothing)."""
    _PANELS[name] = source


def server_panels(*, user: Actor, server: Server) -> list[Panel]:
    """The panels that have something to show for this server, in their registration order."""
    found = (source(user, server) for source in _PANELS.values())
    return [panel for panel in found if panel is not None]
