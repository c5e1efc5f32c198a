"""The CSV columns of sites, racks and network records, for the admin's import and export
(werkbank/admin_io.py).

A site is found by its name, a rack by its site's name and its own, a network record by its server's
hostname: a row that names one already stored changes it, any other row adds one. Every row is written by
the deployment services (`site_create`, `rack_create`, `network_set`, ...), so their rules (a customer room
names its customer, a rack is 1 to 60 U, no address used twice) and their audit rows hold as in the forms.
BMC credentials are no column: they are set per server, in its form, and never leave it.
"""

from __future__ import annotations

from typing import Any

from import_export.fields import Field

from builds.models import Server
from deployment.models import Rack, ServerNetwork, Site
from deployment.services import network_set, rack_create, rack_update, site_create, site_update
from werkbank.admin_io import NamedForeignKeyWidget, ServiceResource
from werkbank.models import Organization


class SiteResource(ServiceResource):
    customer = Field(
        attribute="customer", column_name="customer", widget=NamedForeignKeyWidget(Organization, field="name")
    )

    class Meta(ServiceResource.Meta):
        model = Site
        name = "Sites"
        fields = ("name", "kind", "operator", "customer", "address", "country")
        import_id_fields = ("name",)

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> Site:
        if created:
            return site_create(actor=actor, **{name: getattr(instance, name) for name in self._meta.fields})
        return site_update(site=instance, actor=actor, **values)


class RackResource(ServiceResource):
    site = Field(attribute="site", column_name="site", widget=NamedForeignKeyWidget(Site, field="name"))

    class Meta(ServiceResource.Meta):
        model = Rack
        name = "Racks"
        fields = ("site", "name", "height_u")
        import_id_fields = ("site", "name")

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> Rack:
        if created:
            return rack_create(
                site=instance.site, actor=actor, name=instance.name, height_u=instance.height_u
            )
        return rack_update(rack=instance, actor=actor, height_u=values.get("height_u"))


class ServerNetworkResource(ServiceResource):
    server = Field(
        attribute="server", column_name="server", widget=NamedForeignKeyWidget(Server, field="hostname")
    )

    class Meta(ServiceResource.Meta):
        model = ServerNetwork
        name = "Network records"
        fields = ("server", "management_ip", "bmc_ip", "bmc_mac")
        import_id_fields = ("server",)

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> ServerNetwork:
        return network_set(
            server=instance.server,
            actor=actor,
            management_ip=instance.management_ip,
            bmc_ip=instance.bmc_ip,
            bmc_mac=instance.bmc_mac,
            new=created,
        )
