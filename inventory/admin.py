"""Admin of the inventory app."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from inventory.models import Part
from inventory.services import PART_FIELDS, part_create, part_update
from werkbank.admin import PMAdmin


@admin.register(Part)
class PartAdmin(PMAdmin):
    list_display = [
        "mpn",
        "name",
        "category",
        "manufacturer",
        "vram_gb",
        "tdp_w",
        "pcie_gen",
        "pcie_lanes",
        "u_height",
    ]
    list_filter = ["category", "manufacturer", "pcie_gen"]
    search_fields = ["mpn", "name", "manufacturer"]

    def save_model(self, request: HttpRequest, obj: Part, form: Any, change: bool) -> None:
        if change:
            part_update(part=obj, actor=request.user, **self.changed_values(form))
        else:
            created = part_create(
                actor=request.user, **{key: form.cleaned_data.get(key) for key in PART_FIELDS}
            )
            obj.pk = created.pk
