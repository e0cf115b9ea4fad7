"""/review/: the queue, a task's page and its actions, the live status, the dashboard."""
from django.urls import path

from governance.review import acts, feedback, live_batches, views

app_name = "review"

urlpatterns = [
    path("", views.queue_list, name="queue"),
    path("state.json", views.queue_state, name="queue_state"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/batches.json", live_batches.state, name="dashboard_batches"),
    path("tasks/<uuid:pk>/", views.task_detail, name="task"),
    path("tasks/<uuid:pk>/state.json", views.task_state, name="task_state"),
    path("tasks/<uuid:pk>/accept", views.accept, name="accept"),
    path("tasks/<uuid:pk>/reject", acts.reject, name="reject"),
    path("tasks/<uuid:pk>/undo", acts.undo, name="undo"),
    path("bulk-accept", acts.bulk_accept, name="bulk_accept"),
    path("bulk-undo", acts.bulk_undo, name="bulk_undo"),
    path("tasks/<uuid:pk>/rescreen", acts.rescreen, name="rescreen"),
    path("tasks/<uuid:pk>/cancel", views.cancel, name="cancel"),
    path("tasks/<uuid:pk>/retry", views.retry, name="retry"),
    path("tasks/<uuid:pk>/feedback", feedback.mark, name="feedback"),
    path("tasks/<uuid:pk>/missed", feedback.missed, name="missed"),
    path("tasks/<uuid:pk>/apply-suggestion", feedback.apply_suggestion, name="apply_suggestion"),
    path("tasks/<uuid:pk>/keep", feedback.keep, name="keep"),
    path("language", views.language, name="language"),
]
