"""The evidence endpoints (SPEC §13.1): verify a text, list or stream the records. Administrator consumers only."""
import re
import uuid

from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from governance.api.auth import IsAdminConsumer, IsConsumer
from governance.api import evidence_serializers as serializers
from governance.api.batch_views import PAGE_PARAMETER, page_of
from governance.api.views import ERRORS, SLUG_PATTERN, AnyAccept, GavelAPIView, as_utc
from governance.errors import BadInput
from governance.evidence import export
from governance.models import EvidenceRecord

NDJSON = "application/x-ndjson"
FILTERS = ("since", "until", "surface", "configuration", "outcome", "task")


class EvidenceVerifyView(GavelAPIView):
    # Every consumer verifies the texts delivered to it; none learns about another's (SPEC §12.5, §13.1).
    permission_classes = [IsConsumer]

    @extend_schema(
        request=serializers.VerifyRequestSerializer,
        responses={200: serializers.VerifyResponseSerializer, **ERRORS},
        summary="Find the calling consumer's evidence records of a text",
        description="Answers every record of a text delivered to this consumer (its screenings, completions "
                    "and tasks) whose text_hash matches the normalised text: which policy version, which checks, "
                    "who reviewed. None for a text Gavel did not deliver to it, or one changed since — and then "
                    "no text_hash either (a keyed hash of any text sent would test guesses against "
                    "exported hashes). A consumer reads no other consumer's texts, an administrator consumer "
                    "included, so it verifies none of theirs (docs/evidence.md).",
    )
    def post(self, request):
        text = self.parsed(serializers.VerifyRequestSerializer, request)["text"]
        consumer = request.user
        # A consumer's own records only (§12.5): verify confirms nothing about another consumer's texts.
        own = Q(actor=f"consumer:{consumer.name}") | Q(task__consumer=consumer)
        return Response(export.verify(text, within=own))


def _moment(params, name: str):
    try:
        moment = parse_datetime(params[name])
    except ValueError:  # well-formed but impossible, e.g. month 13
        moment = None
    if moment is None:
        raise BadInput(_("%(name)s is not a date-time.") % {"name": name},
                       fields={name: [_("Give an ISO 8601 date-time.")]})
    return as_utc(moment)


def filters_of(params) -> dict:
    """The list's filters from the query, each checked: a clear 400 naming the parameter."""
    found = {}
    for name in ("since", "until"):
        if name in params:
            found[name] = _moment(params, name)
    choices = {"surface": EvidenceRecord.Surface.values, "outcome": ["allowed", "allowed_with_hints"]}
    for name, allowed in choices.items():
        if name in params:
            if params[name] not in allowed:
                raise BadInput(_("Unknown %(name)s.") % {"name": name}, fields={name: [_("Unknown value.")]})
            found[name] = params[name]
    if "configuration" in params:
        if not re.fullmatch(SLUG_PATTERN, params["configuration"]):
            raise BadInput(_("Not a configuration identifier."),
                           fields={"configuration": [_("Give a configuration identifier.")]})
        found["configuration"] = params["configuration"]
    if "task" in params:
        try:
            found["task"] = uuid.UUID(params["task"])
        except ValueError:
            raise BadInput(_("task is not a task id."), fields={"task": [_("Give a task's id (a UUID).")]})
    return found


class EvidenceListView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    content_negotiation_class = AnyAccept

    @extend_schema(
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="ISO 8601; records at or after it"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="ISO 8601; records before it"),
            OpenApiParameter("surface", str, enum=EvidenceRecord.Surface.values),
            OpenApiParameter("configuration", str, pattern=SLUG_PATTERN, description="a configuration identifier"),
            OpenApiParameter("outcome", str, enum=["allowed", "allowed_with_hints"]),
            OpenApiParameter("task", OpenApiTypes.UUID, description="the records of one task"),
            PAGE_PARAMETER,
        ],
        responses={200: OpenApiResponse(serializers.EvidencePageSerializer,
                                        description=f"A page of records, oldest first; with `Accept: {NDJSON}` "
                                                    "every matching record as one JSON object per line, "
                                                    "streamed, no paging."),
                   **ERRORS},
        summary="List or stream evidence records (administrator consumers only)",
    )
    def get(self, request):
        params = request.query_params
        if NDJSON in request.META.get("HTTP_ACCEPT", ""):
            unknown = sorted(set(params) - set(FILTERS))
            if unknown:
                raise BadInput(_("Unknown query parameter."), fields={k: [_("Unknown field.")] for k in unknown})
            lines = export.ndjson_lines(export.selected(**filters_of(params)))
            return StreamingHttpResponse(lines, content_type=NDJSON)
        rows = export.selected(**filters_of(params))
        return page_of(request, rows, set(FILTERS), export.as_json)
