"""Serializers of the inventory app."""

from rest_framework import serializers

from inventory.models import Part


class PartSerializer(serializers.ModelSerializer):
    class Meta:
        model = Part
        fields = [
            "id",
            "category",
            "manufacturer",
            "mpn",
            "name",
            "vram_gb",
            "tdp_w",
            "pcie_gen",
            "pcie_lanes",
            "u_height",
            "specs",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        validators: list = []  # the service checks (manufacturer, mpn) and names the field
