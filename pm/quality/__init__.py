"""The fleet's quality (issue #29): failure rates per lot, supplier, part and connector position, from the
attributions of the warranty app, with their Wilson intervals and flags; fed back into procurement and the
bench through the registries of inventory.gates and builds.proposals (pm/apps.py)."""
