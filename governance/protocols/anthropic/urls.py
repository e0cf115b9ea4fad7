"""URLs of the Anthropic Messages API, mounted at /anthropic/v1/ (and `messages` at /v1/ too)."""
from django.urls import path

from governance.protocols.anthropic import views

urlpatterns = [
    path("models", views.ModelsView.as_view(), name="models"),
    path("models/<slug:identifier>", views.ModelView.as_view(), name="model"),
    path("messages", views.MessagesView.as_view(), name="messages"),
    path("messages/count_tokens", views.CountTokensView.as_view(), name="count-tokens"),
]
