"""The portal's routes under /portal/ (customers), joined from its page modules."""

from portal.views import credentials, customer, documents, exports, warranty

app_name = "portal"

urlpatterns = [
    *customer.urlpatterns,
    *warranty.urlpatterns,
    *documents.urlpatterns,
    *exports.urlpatterns,
    *credentials.urlpatterns,
]
