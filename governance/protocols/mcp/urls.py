"""The MCP gateway's URL: /mcp/<configuration> (SPEC §14), with or without a trailing slash."""
from django.urls import path

from governance.protocols.mcp import views

urlpatterns = [
    path("<slug:identifier>", views.endpoint, name="endpoint"),
    path("<slug:identifier>/", views.endpoint),
]
