"""Policy drafts over the REST API (SPEC §12.5): list, open, read with the report, submit, publish, withdraw,
and restore a kept version as a draft. Administrator consumers only, like the policy document itself.

A consumer is named as the governance log names it, `consumer:<name>`: the draft's author when it opened
the draft, its approver when it publishes one. With GAVEL_POLICY_FOUR_EYES=1 a consumer never publishes a
draft it opened (403 four_eyes); another administrator consumer, or a person in the admin, does.
Over the API the report's replay is counts only, as a dry run's is (no task id: a consumer reads no other
consumer's tasks). Thin: governance.policy.proposals does the work.
"""
import yaml
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from governance import policy
from governance.api import serializers as api_serializers
from governance.api.auth import IsAdminConsumer
from governance.api.parsers import BodyParser
from governance.api.release_views import DocumentField
from governance.api.fields import StrictSerializer, String
from governance.api.views import ERRORS, MAX_REPLAY, UNPROCESSABLE, GavelAPIView, _flag, _number, _positive_int
from governance.api.errors import policy_refused
from governance.errors import BadInput, UnknownRecord, Unprocessable
from governance.models import PolicyDraft, PolicyVersion
from governance.policy import proposals
from governance.policy.loading import check_document, load_yaml
from governance.policy.proposals_report import DEFAULT_COST_CAP, draft_facts, draft_report
from governance.policy.replay import narrowest_window
from governance.policy.testing import JUDGE_MODES

CONFLICT = {409: OpenApiResponse(api_serializers.ErrorSerializer)}
# A draft whose changes make no valid policy is refused at submit and at publish alike (decision 0051: the
# request keeps its schema, what it asks cannot be done).
DRAFT_INVALID = ("invalid_policy: the draft's changes, applied to the live policy, do not make a valid policy; "
                 '`fields` names every path, a record by its name (`examples["plain-news"].configuration`).')


class DraftRequest(StrictSerializer):
    title = String(max_length=200, allow_blank=True,
                                  help_text="What the change is for. An open draft of the same title by the same "
                                            "consumer is updated.")
    document = DocumentField(help_text="The proposed policy: a policy document as JSON, or as a YAML string. Records "
                                    "it names are added or changed; with prune, records of its sections it "
                                    "does not name are removed.")
    prune = serializers.BooleanField(default=False, help_text="Remove the records of the document's sections "
                                                              "it does not name.")


class PublishRequest(StrictSerializer):
    revision = serializers.RegexField(
        r"^[0-9a-f]{64}$", help_text="The draft's `revision` as the approver read it (GET …/drafts/{id}): a draft "
                                     "that changed since is 409 draft_changed, nothing published.")
    allow_regressions = serializers.BooleanField(
        default=False, help_text="Publish even when passing examples would fail (counted in the version). Not with "
                                 "publish_at: the worker never accepts a regression (422).")
    publish_at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="Instead of publishing now, let the worker publish this revision at this time (ISO 8601), "
                  "through the gate against the policy of that moment; null clears the time. A change to the "
                  "draft before then withdraws the schedule.")

    def validate(self, attrs):
        if attrs.get("publish_at") is not None and attrs.get("allow_regressions"):
            # Each member keeps its schema; together they ask what cannot be done: 422, not 400 (decision 0051).
            message = _("The worker never accepts a regression: publish in person to accept one.")
            raise Unprocessable(message, fields={"allow_regressions": [message]})
        return attrs


def _draft(draft_id: int) -> PolicyDraft:
    # A number past what the id column holds names no draft (and must not reach the query).
    draft = PolicyDraft.objects.filter(pk=draft_id).first() if draft_id < 2**31 else None
    if draft is None:
        raise UnknownRecord(_("Unknown draft."), fields={"id": [_("Unknown draft.")]})
    return draft


def _summary(draft: PolicyDraft) -> dict:
    facts = draft_facts(draft)
    facts["changes"] = [{"section": c["section"], "name": c["name"], "action": c["action"]}
                        for c in draft.changes]
    return facts


def _document(value):
    # YAML text: what it holds no schema says, so its refusals are 422 (release_views.YAML_TEXT).
    refused = Unprocessable if isinstance(value, str) else BadInput
    try:
        document = load_yaml(value) if isinstance(value, str) else value
        check_document(document)  # as PUT policy: no alias, bounded nesting and size
    except yaml.YAMLError as exc:
        raise refused(_("The document does not parse: %(e)s") % {"e": exc},
                      fields={"document": [_("The document does not parse as YAML.")]}) from exc
    if not isinstance(document, dict):
        raise refused(_("Send a policy document."), fields={"document": [_("Send a policy document.")]})
    return document


class DraftsView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    parser_classes = [BodyParser]

    @extend_schema(operation_id="api_v1_policy_drafts_list", responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   parameters=[OpenApiParameter("status", str, enum=list(PolicyDraft.Status.values),
                                                description="Only drafts of this status.")],
                   summary="List the policy drafts, newest first")
    def get(self, request):
        drafts = PolicyDraft.objects.prefetch_related("comments")
        wanted = request.query_params.get("status")
        if wanted is not None:
            if wanted not in PolicyDraft.Status.values:
                raise BadInput(_("Unknown status."), fields={"status": [", ".join(PolicyDraft.Status.values)]})
            drafts = drafts.filter(status=wanted)
        rows = [_summary(d) for d in drafts.order_by("-updated_at", "-id")[:200]]
        return self.with_policy_version(Response({"drafts": rows}), PolicyVersion.current())

    @extend_schema(request=DraftRequest, responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT, **ERRORS,
                                                    **UNPROCESSABLE},
                   summary="Open a draft from a policy document (or update this consumer's open draft of that title)",
                   description="Nothing goes live: the draft holds what importing the document would change, record "
                               "by record. 201 for a new draft, 200 when an open draft of the same title was updated.")
    def post(self, request):
        data = self.parsed(DraftRequest, request)
        document = _document(data["document"])
        as_text = isinstance(data["document"], str)
        try:
            draft, created = proposals.draft_from_document(document, request.user, title=data["title"],
                                                           prune=data["prune"])
        except policy.PolicyInvalid as exc:
            raise policy_refused(exc, _("The document has errors; no draft was made."), text=as_text,
                                 fields={f"document.{path}": messages for path, messages in exc.errors.items()}) from exc
        return self.with_policy_version(Response(_summary(draft), status=201 if created else 200),
                                        PolicyVersion.current())


class DraftView(GavelAPIView):
    permission_classes = [IsAdminConsumer]

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, **ERRORS}, summary="A draft with its report",
        description="The report `manage.py policy_draft ID --format json --counts-only` prints: the changes, a "
                    "diff, conflicts, the examples under the live policy and under the draft (per rule and term "
                    "with precision, recall and a sentence), the replay of a window of retained texts (counts) "
                    "and the judges' calls and cost.",
        parameters=[
            OpenApiParameter("replay", {"type": "integer", "minimum": 0},
                             description="Replay the retained texts of the last N tasks (500)."),
            OpenApiParameter("replay_hours", {"type": "number", "format": "double", "minimum": 0, "maximum": 8760},
                             description="Instead: the retained texts of the last H hours."),
            OpenApiParameter("judges", str, enum=["0", "1", *JUDGE_MODES],
                             description="For this report only: 1 runs the judges (examples and replay, within the "
                                         "cost cap), 0 skips them; without it the draft's own choice "
                                         "(`replay_judges`) holds. skip, cached or live set the examples' judges."),
            OpenApiParameter("replay_judges", bool, description="Ask the judges in the replay too (as judges=1)."),
            OpenApiParameter("cost_cap", {"type": "number", "format": "double", "minimum": 0},
                             description="What the report's judges may cost at most (1.0, in the usage records' "
                                         "currency); past it they stop and the report says how many texts were "
                                         "judged."),
        ])
    def get(self, request, draft_id: int):
        params = request.query_params
        replay = min(_positive_int(params.get("replay", 500), "replay", zero=True), MAX_REPLAY)
        replay = narrowest_window(replay)  # never fewer than GAVEL_REPORT_MIN_TEXTS (issue 41)
        hours = None
        if "replay_hours" in params:
            hours = _number(params["replay_hours"], "replay_hours")
            if hours > 8760:
                raise BadInput(_("At most 8760 hours."), fields={"replay_hours": [_("At most 8760 hours.")]})
        judges, replay_judges = _judges(params)
        cost_cap = _number(params.get("cost_cap", str(DEFAULT_COST_CAP)), "cost_cap")
        report = draft_report(_draft(draft_id), replay_tasks=replay, replay_hours=hours, judges=judges,
                              replay_judges=replay_judges, cost_cap=cost_cap, task_ids=False)
        return self.with_policy_version(Response(report), PolicyVersion.current())


def _judges(params) -> tuple[str | None, bool | None]:
    """`judges=0|1` overrides the draft's choice for one report; `judges=skip|cached|live` names the examples'
    judges (and `replay_judges` the replay's), as before the choice was the draft's."""
    value = params.get("judges")
    replay_judges = _flag(params, "replay_judges") if "replay_judges" in params else None
    if value is None:
        return None, replay_judges
    if value.lower() in ("0", "1", "true", "false"):
        return None, _flag(params, "judges")
    if value not in JUDGE_MODES:
        raise BadInput(_("Unknown judges mode."), fields={"judges": ["0, 1, " + ", ".join(JUDGE_MODES)]})
    return value, replay_judges


class DraftActionView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    parser_classes = [BodyParser]
    action = ""

    def post(self, request, draft_id: int):
        draft = _draft(draft_id)
        if self.action == "submit":
            proposals.submit(draft, request.user)
        elif self.action == "withdraw":
            proposals.withdraw(draft, request.user)
        return self.with_policy_version(Response(_summary(draft)), PolicyVersion.current())


class DraftSubmitView(DraftActionView):
    action = "submit"

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS, 409: OpenApiResponse(
        api_serializers.ErrorSerializer, description="draft_conflicts (naming each record changed live and in the "
                                                     "draft) or draft_status (the draft is not open)."),
        422: OpenApiResponse(api_serializers.ErrorSerializer, description=DRAFT_INVALID)},
                   summary="Submit an open draft for approval",
                   description="Only a draft that could be published as it stands is submitted: 409 draft_conflicts "
                               "while a record changed live and in the draft, 422 invalid_policy when its changes "
                               "make no valid policy. Regressions of examples do not stop a submission: the report "
                               "counts them and the approver decides when publishing.")
    def post(self, request, draft_id: int):
        return super().post(request, draft_id)


class DraftWithdrawView(DraftActionView):
    action = "withdraw"

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS, **CONFLICT},
                   summary="Withdraw an open or submitted draft")
    def post(self, request, draft_id: int):
        return super().post(request, draft_id)


class DraftPublishView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    parser_classes = [BodyParser]

    @extend_schema(
        request=PublishRequest, responses={200: OpenApiTypes.OBJECT, **ERRORS, **CONFLICT, 422: OpenApiResponse(
            api_serializers.ErrorSerializer, description="allow_regressions with publish_at (the worker never "
                                                         "accepts a regression), or " + DRAFT_INVALID)},
        summary="Publish a draft through the release gate",
        description="The live policy of this moment with the draft's changes, imported through the gate, if the "
                    "draft is still the `revision` the approver read (409 draft_changed otherwise): 409 "
                    "examples_regressed (naming them) unless allow_regressions, 409 draft_conflicts while a record "
                    "changed live and in the draft, 403 four_eyes when GAVEL_POLICY_FOUR_EYES is on and this "
                    "consumer opened the draft, 403 admin_only_fields when it changes admin-only fields or removes "
                    "records and the approver is no administrator, 422 invalid_policy when its changes make no "
                    "valid policy. With publish_at, the draft is scheduled instead (the answer's publish_at and "
                    "scheduled_by say so).")
    def post(self, request, draft_id: int):
        data = self.parsed(PublishRequest, request)
        draft = _draft(draft_id)
        if "publish_at" in data:
            proposals.schedule_publish(draft, request.user, data["publish_at"], revision=data["revision"])
            return self.with_policy_version(Response(_summary(draft)), PolicyVersion.current())
        try:
            version = proposals.publish(draft, request.user, allow_regressions=data["allow_regressions"],
                                        revision=data["revision"])
        except policy.PolicyInvalid as exc:
            # Schema-valid request, a draft that cannot be applied: 422 (decision 0051), every path named.
            raise proposals.invalid_draft(draft, exc) from exc
        draft.refresh_from_db()
        body = _summary(draft)
        body["version"] = version
        return self.with_policy_version(Response(body), PolicyVersion.current())


class VersionRestoreView(GavelAPIView):
    permission_classes = [IsAdminConsumer]

    @extend_schema(request=None, responses={201: OpenApiTypes.OBJECT, **ERRORS},
                   summary="Restore a kept version as a draft",
                   description="Nothing goes live: the draft's changes turn the live policy into that version, "
                               "removals included; read its report, then publish it.")
    def post(self, request, number: int):
        if number >= 2**63:
            raise UnknownRecord(_("Policy version %(number)s is not kept.") % {"number": number},
                                code="unknown_version")
        try:
            draft = proposals.draft_from_version(number, request.user)
        except policy.PolicyInvalid as exc:
            raise BadInput(_("That version no longer makes a valid policy; no draft was made."),
                           code="invalid_policy", fields=exc.errors) from exc
        return self.with_policy_version(Response(_summary(draft), status=201), PolicyVersion.current())
