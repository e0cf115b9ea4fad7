"""Policy releases over the REST API (SPEC §12): test the policy or a draft, list the kept versions.

Administrator consumers only, like the policy document itself. Thin: governance.policy.release does the work.
"""
import yaml
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from governance import policy
from governance.policy.loading import check_document, load_yaml
from governance.api.auth import IsAdminConsumer
from governance.api.parsers import BodyParser
from governance.api.fields import StrictSerializer
from governance.api.serializers import String
from governance.api.views import ERRORS, POLICY_DOCUMENT, UNPROCESSABLE, GavelAPIView
from governance.api.errors import policy_refused
from governance.errors import BadInput, Unprocessable
from governance.models import PolicyVersion
from governance.policy import release, versions
from governance.policy.testing import JUDGE_MODES


# A policy document's YAML as one string: what it holds no JSON Schema says, so any refusal of it (it does not
# parse, or its document breaks the policy schema) is a 422 naming the field, never a 400.
YAML_TEXT = {"type": "string", "description": "The document as YAML. A text that does not parse, or whose "
                                              "document the import refuses, is a 422 naming every path."}


@extend_schema_field({"oneOf": [POLICY_DOCUMENT, YAML_TEXT]})
class DocumentField(serializers.JSONField):
    """A policy document as JSON, or its YAML as one string (the import reads both)."""


@extend_schema_field({"oneOf": [POLICY_DOCUMENT, YAML_TEXT], "nullable": True})
class DraftField(DocumentField):
    """As DocumentField, or null: the current policy."""


class PolicyTestRequest(StrictSerializer):
    draft = DraftField(required=False, allow_null=True,
                                  help_text="A policy document as JSON, or as a YAML string; null or absent: "
                                            "the current policy.")
    only = serializers.ListField(child=String(), required=False,
                                 help_text="Names of the examples to screen (default: every example).")
    judges = serializers.ChoiceField(JUDGE_MODES, default="cached",
                                     help_text="live: ask every judge; cached: reuse kept verdicts; skip: ask none.")


class PolicyTestView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    parser_classes = [BodyParser]

    @extend_schema(request=PolicyTestRequest, responses={200: OpenApiTypes.OBJECT, **ERRORS, **UNPROCESSABLE},
                   summary="Screen the policy examples under the policy, or under a draft (nothing written)")
    def post(self, request):
        if not request.body.strip():
            raise BadInput(_("Send a JSON object (it may be empty: {})."),
                           fields={"body": [_("The body is empty.")]})
        data = self.parsed(PolicyTestRequest, request)
        draft = data.get("draft")
        as_text = isinstance(draft, str)
        try:
            if as_text:
                draft = load_yaml(draft)
            check_document(draft)  # as PUT policy: no alias, bounded nesting and size
        except yaml.YAMLError as exc:
            raise (Unprocessable if as_text else BadInput)(
                _("The draft does not parse: %(e)s") % {"e": exc},
                fields={"draft": [_("The draft does not parse as YAML.")]}) from exc
        try:
            report = release.test_policy(draft=draft, only=data.get("only"), judges=data["judges"])
        except policy.PolicyInvalid as exc:
            raise policy_refused(exc, _("The draft has errors; nothing was tested."), text=as_text,
                                 fields={f"draft.{path}": messages for path, messages in exc.errors.items()}) from exc
        return self.with_policy_version(Response(report.as_dict()), PolicyVersion.current())


class PolicyVersionsView(GavelAPIView):
    permission_classes = [IsAdminConsumer]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **ERRORS}, summary="List the kept policy versions")
    def get(self, request):
        rows = [{"version": r.number, "at": r.at.isoformat(), "actor": r.actor, "source": r.source,
                 "author": r.author, "approver": r.approver, "regressions_accepted": r.regressions_accepted,
                 "summary": r.summary} for r in versions.history()]
        return self.with_policy_version(Response({"versions": rows}), PolicyVersion.current())
