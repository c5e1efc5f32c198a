"""Bench pages of the builds app, under /bench/. Each change is its own POST endpoint."""

from django.urls import path

from builds import label_views, receiving_views, token_views, views

app_name = "bench"

urlpatterns = [
    path("", views.BenchListView.as_view(), name="list"),
    path("tokens/", token_views.BenchTokensView.as_view(), name="tokens"),
    path("tokens/revoke/", token_views.BenchTokenRevokeView.as_view(), name="token-revoke"),
    path("servers/<int:pk>/", views.BenchServerView.as_view(), name="server"),
    path("servers/<int:pk>/install/", views.InstallView.as_view(), name="install"),
    path("servers/<int:pk>/remove/", views.RemoveView.as_view(), name="remove"),
    path("servers/<int:pk>/move/", views.MoveView.as_view(), name="move"),
    path("servers/<int:pk>/steps/", views.StepLogView.as_view(), name="step-log"),
    path("servers/<int:pk>/blacklist/", views.BlacklistView.as_view(), name="blacklist"),
    path("servers/<int:pk>/start-assembly/", views.StartAssemblyView.as_view(), name="start-assembly"),
    path("servers/<int:pk>/mark-assembled/", views.MarkAssembledView.as_view(), name="mark-assembled"),
    path("purchase-orders/<int:pk>/receive/", receiving_views.BenchReceiveView.as_view(), name="po-receive"),
    path("servers/<int:pk>/label.pdf", label_views.ServerLabelView.as_view(), name="server-label"),
    path(
        "servers/<int:pk>/installations/<int:installation_pk>/label.pdf",
        label_views.ComponentLabelView.as_view(),
        name="component-label",
    ),
]
