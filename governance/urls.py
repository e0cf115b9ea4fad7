"""URL map: admin, REST API v1, the OpenAI-compatible gateway (Chat Completions, Responses), the Anthropic
Messages API, review UI and its login, health check."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from governance import health, pages

from governance.policy import import_admin as policy_admin

from governance.policy import release_admin
from governance.api import batch_views, draft_views, release_views, views
from governance.api import schema  # noqa: F401  (registers the OpenAPI description of every surface)
from governance.protocols.anthropic import views as anthropic_views
from governance.api import evidence_views
from governance.evidence import admin_pages as evidence_pages
from governance.evidence import scrape

api = [
    path("screenings", views.ScreeningsView.as_view(), name="screenings"),
    path("completions", views.CompletionsView.as_view(), name="completions"),
    path("tasks", views.TasksView.as_view(), name="tasks"),
    path("tasks/<uuid:task_id>", views.TaskView.as_view(), name="task"),
    path("tasks/<uuid:task_id>/cancel", views.TaskCancelView.as_view(), name="task-cancel"),
    path("batches", batch_views.BatchesView.as_view(), name="batches"),
    path("batches/<uuid:batch_id>", batch_views.BatchView.as_view(), name="batch"),
    path("batches/<uuid:batch_id>/tasks", batch_views.BatchTasksView.as_view(), name="batch-tasks"),
    path("batches/<uuid:batch_id>/cancel", batch_views.BatchCancelView.as_view(), name="batch-cancel"),
    path("events", views.EventsView.as_view(), name="events"),
    path("evidence", evidence_views.EvidenceListView.as_view(), name="evidence"),
    path("evidence/verify", evidence_views.EvidenceVerifyView.as_view(), name="evidence-verify"),
    path("rules/stats", views.RuleStatsView.as_view(), name="rule-stats"),
    path("policy", views.PolicyView.as_view(), name="policy"),
    path("policy/schema.json", views.PolicySchemaView.as_view(), name="policy-schema"),
    path("policy/test", release_views.PolicyTestView.as_view(), name="policy-test"),
    path("policy/versions", release_views.PolicyVersionsView.as_view(), name="policy-versions"),
    path("policy/versions/<int:number>/restore", draft_views.VersionRestoreView.as_view(),
         name="policy-version-restore"),
    path("policy/drafts", draft_views.DraftsView.as_view(), name="policy-drafts"),
    path("policy/drafts/<int:draft_id>", draft_views.DraftView.as_view(), name="policy-draft"),
    path("policy/drafts/<int:draft_id>/submit", draft_views.DraftSubmitView.as_view(), name="policy-draft-submit"),
    path("policy/drafts/<int:draft_id>/publish", draft_views.DraftPublishView.as_view(),
         name="policy-draft-publish"),
    path("policy/drafts/<int:draft_id>/withdraw", draft_views.DraftWithdrawView.as_view(),
         name="policy-draft-withdraw"),
    path("schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"),
    path(
        "docs/",
        # The split view serves Swagger UI's start-up script as a file of its own: no inline script (CSP).
        SpectacularSwaggerSplitView.as_view(url_name="api:schema", authentication_classes=[], permission_classes=[]),
        name="docs",
    ),
]

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("metrics", scrape.metrics_view, name="metrics"),
    # Before the admin's own catch-all: the policy file pages live in the admin's namespace and layout.
    path("admin/policy/export/", admin.site.admin_view(policy_admin.policy_export), name="gavel_policy_export"),
    path("admin/policy/import/", admin.site.admin_view(policy_admin.policy_import), name="gavel_policy_import"),
    path("admin/policy/test/", admin.site.admin_view(release_admin.policy_test), name="gavel_policy_test"),
    path("admin/policy/history/", admin.site.admin_view(release_admin.policy_history), name="gavel_policy_history"),
    path("admin/evidence/verify/", admin.site.admin_view(evidence_pages.verify_page), name="gavel_evidence_verify"),
    path("admin/evidence/export/", admin.site.admin_view(evidence_pages.export_page), name="gavel_evidence_export"),
    path("admin/language/", admin.site.admin_view(pages.switch_language), name="gavel_switch_language"),
    path("admin/", admin.site.urls),
    path("api/v1/", include((api, "api"))),
    path("openai/v1/", include(("governance.protocols.openai_chat.urls", "openai"))),
    path("openai/v1/", include(("governance.protocols.openai_responses.urls", "openai-responses"))),
    path("anthropic/v1/", include(("governance.protocols.anthropic.urls", "anthropic"))),
    path("mcp/", include(("governance.protocols.mcp.urls", "mcp"))),  # SPEC §14
    # Anthropic's clients post to <host>/v1/messages; /v1/models stays OpenAI's (SPEC §11.5).
    path("v1/messages", anthropic_views.MessagesView.as_view(), name="anthropic-v1-messages"),
    path("v1/messages/count_tokens", anthropic_views.CountTokensView.as_view(), name="anthropic-v1-count-tokens"),
    # The same gateway at /v1/: clients that look for <host>/v1/models (litellm's discovery) find it.
    path("v1/", include(("governance.protocols.openai_chat.urls", "openai-v1"))),
    path("v1/", include(("governance.protocols.openai_responses.urls", "openai-responses-v1"))),
    path("review/", include("governance.review.urls")),
    # Editors who are not staff log in here: the admin's login refuses them (SPEC §10).
    path("accounts/login/", auth_views.LoginView.as_view(template_name="review/login.html", next_page="review:queue"),
         name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
]

handler400 = "governance.api.errors.bad_request"
handler403 = "governance.api.errors.permission_denied"
handler404 = "governance.api.errors.page_not_found"
handler500 = "governance.api.errors.server_error"
