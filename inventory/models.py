"""Inventory models: the part catalogue."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Exists, Q

from inventory.choices import PartCategory
from werkbank.access import VisibleToQuerySet, member_organizations


class PartQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any) -> PartQuerySet:
        # The catalogue is not tenant-owned: every member of an organization may read it.
        return self.filter(Exists(member_organizations(user)))


class Part(models.Model):
    """A catalogue entry: one manufacturer part number, with the specs the checks need."""

    category = models.CharField(max_length=16, choices=PartCategory.choices)
    manufacturer = models.CharField(max_length=100)
    mpn = models.CharField("MPN", max_length=100, help_text="Manufacturer part number")
    name = models.CharField(max_length=200)
    vram_gb = models.PositiveIntegerField("VRAM (GB)", null=True, blank=True)
    tdp_w = models.PositiveIntegerField("TDP (W)", null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField("PCIe gen", null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField("PCIe lanes", null=True, blank=True)
    u_height = models.PositiveSmallIntegerField("Height (U)", null=True, blank=True)
    specs = models.JSONField(default=dict, blank=True, help_text="Further specs, e.g. capacity_gb, cores")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PartQuerySet.as_manager()

    class Meta:
        ordering = ["category", "manufacturer", "mpn"]
        constraints = [
            models.UniqueConstraint(
                fields=["manufacturer", "mpn"],
                name="%(app_label)s_%(class)s_unique_manufacturer_mpn",
                violation_error_message="A part with this manufacturer and MPN already exists.",
            ),
            models.CheckConstraint(
                condition=Q(category__in=PartCategory.values),
                name="%(app_label)s_%(class)s_category_valid",
                violation_error_message="Unknown part category.",
            ),
            models.CheckConstraint(
                condition=Q(vram_gb__isnull=True) | Q(category=PartCategory.GPU),
                name="%(app_label)s_%(class)s_vram_only_gpu",
                violation_error_message="Only a GPU has VRAM.",
            ),
            models.CheckConstraint(
                condition=Q(u_height__isnull=True) | Q(category=PartCategory.CHASSIS, u_height__gte=1),
                name="%(app_label)s_%(class)s_u_height_only_chassis",
                violation_error_message="Only a chassis has a U height, of at least 1U.",
            ),
            models.CheckConstraint(
                condition=Q(pcie_gen__isnull=True) | Q(pcie_gen__gte=1, pcie_gen__lte=7),
                name="%(app_label)s_%(class)s_pcie_gen_range",
                violation_error_message="PCIe generation must be between 1 and 7.",
            ),
            models.CheckConstraint(
                condition=Q(pcie_lanes__isnull=True) | Q(pcie_lanes__in=[1, 2, 4, 8, 16, 32]),
                name="%(app_label)s_%(class)s_pcie_lanes_valid",
                violation_error_message="PCIe lanes must be 1, 2, 4, 8, 16 or 32.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.manufacturer} {self.name} ({self.mpn})"
