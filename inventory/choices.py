"""Choices of the inventory app."""

from django.db import models


class PartCategory(models.TextChoices):
    GPU = "gpu", "GPU"
    CPU = "cpu", "CPU"
    MEMORY = "memory", "Memory"
    STORAGE = "storage", "Storage"
    MOTHERBOARD = "motherboard", "Motherboard"
    CHASSIS = "chassis", "Chassis"
    PSU = "psu", "Power supply"
    NIC = "nic", "Network card"
    RISER = "riser", "Riser / cable"
    COOLING = "cooling", "Cooling"
    OTHER = "other", "Other"
