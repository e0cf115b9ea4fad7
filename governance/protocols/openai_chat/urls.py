"""URLs of the OpenAI-compatible gateway, mounted at /openai/v1/."""
from django.urls import path

from governance.protocols.openai_chat import views

urlpatterns = [
    path("models", views.ModelsView.as_view(), name="models"),
    path("models/<slug:identifier>", views.ModelView.as_view(), name="model"),
    path("chat/completions", views.ChatCompletionsView.as_view(), name="chat-completions"),
]
