"""URL of the Responses API, mounted at /openai/v1/ and /v1/ beside the Chat Completions gateway."""
from django.urls import path

from governance.protocols.openai_responses import views

urlpatterns = [
    path("responses", views.ResponsesView.as_view(), name="responses"),
]
