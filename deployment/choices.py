"""Choices of the deployment app: site kinds, rack faces, feed legs, platforms and their verification."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from builds import choices as builds_choices
from builds.choices import ServerStatus


class SiteKind(models.TextChoices):
    COLOCATION = "colocation", _("Colocation")
    CUSTOMER_ROOM = "customer_room", _("Customer's own room")


class RackFace(models.TextChoices):
    FRONT = "front", _("Front")
    REAR = "rear", _("Rear")


class FeedLeg(models.TextChoices):
    """The side of a redundant A/B power pair a feed belongs to."""

    A = "A", "A"
    B = "B", "B"


class Platform(models.TextChoices):
    NONE = "none", _("None (not listed)")
    VAST_AI = "vast_ai", _("Vast.ai")
    OTHER = "other", _("Other platform")


class Verification(models.TextChoices):
    UNVERIFIED = "unverified", _("Unverified")
    VERIFIED = "verified", _("Verified")
    DEVERIFIED = "deverified", _("Deverified")


#: Server statuses in which a placement may be recorded or removed: up to and including burn-in passed. Once
#: a server is deployed its placement is part of the record the handover pack prints.
PLACEMENT_OPEN = frozenset(
    {
        ServerStatus.PLANNED,
        ServerStatus.ASSEMBLING,
        ServerStatus.ASSEMBLED,
        ServerStatus.BURN_IN,
        ServerStatus.BURN_IN_PASSED,
        ServerStatus.BURN_IN_FAILED,
    }
)
#: Statuses of a server that has been deployed, whatever happened since (builds owns the group).
DEPLOYED_OR_LATER = builds_choices.DEPLOYED_OR_LATER


class RentalState(models.TextChoices):
    """What the platform says a listed machine is doing (Vast.ai's host API: rented, idle, offline)."""

    UNKNOWN = "unknown", _("Unknown")
    IDLE = "idle", _("Listed, idle")
    RENTED = "rented", _("Rented")
    OFFLINE = "offline", _("Offline")


class ListingSource(models.TextChoices):
    """Who recorded a listing row or an earnings month: a person, or the platform poll."""

    MANUAL = "manual", _("Recorded by hand")
    POLL = "poll", _("Read from the platform")


class Phase(models.TextChoices):
    """The line conductor(s) of a feed that one server's PSU group draws from; the load splits evenly over
    the phases named. A single-phase feed has L1 only."""

    L1 = "L1", "L1"
    L2 = "L2", "L2"
    L3 = "L3", "L3"
    L1_L2 = "L1+L2", "L1+L2"
    L1_L3 = "L1+L3", "L1+L3"
    L2_L3 = "L2+L3", "L2+L3"
    ALL = "L1+L2+L3", "L1+L2+L3"


class PrefixRole(models.TextChoices):
    MANAGEMENT = "management", _("Management network")
    BMC = "bmc", _("BMC (IPMI) network")


class PlatformAlertKind(models.TextChoices):
    """What the platform poll alerts the PMs and the customer about (issue #28): Vast.ai deverifies a machine
    whose components change, a reliability below `WERKBANK_PLATFORM_RELIABILITY_MIN` loses bookings, and an
    offline machine earns nothing."""

    DEVERIFIED = "deverified", _("Deverified")
    RELIABILITY = "reliability", _("Reliability dropped")
    OFFLINE = "offline", _("Went offline")
