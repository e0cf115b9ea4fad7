"""REST API views (SPEC §11.1): parse, call one service, render."""
import json
import re
from datetime import datetime
from datetime import timezone as dt_timezone

import yaml
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db.models import F
from django.http import StreamingHttpResponse
from django.utils import timezone, translation
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from governance import policy
from governance.policy.loading import DocumentTooLarge, check_document, load_yaml

from governance.runs import completions

from governance.work import queue

from governance.screening import service as services
from governance.api import serializers
from governance.api.auth import IsAdminConsumer
from governance.api.errors import policy_refused
from governance.api.parsers import BODY_TOO_DEEP, MAX_BODY_DEPTH
from governance.errors import BadInput, TooLarge, UnknownRecord
from governance.screening.text import nesting_beyond
from governance.models import GovernanceEvent, PolicyVersion, Task
from governance.policy import release, release_paths, versions
from governance.policy import schema as policy_schema
from governance.policy.proposals_report import draft_facts
from governance.review.rule_stats import MAX_DAYS, rule_stats

SLUG_PATTERN = r"^[-a-zA-Z0-9_]+$"
MAX_PAGE = 1_000_000
ERRORS = {status: OpenApiResponse(serializers.ErrorSerializer) for status in (400, 401, 403, 404, 413, 429)}


def reader_language(request) -> str:
    return translation.get_language() or settings.LANGUAGE_CODE


class AnyAccept(DefaultContentNegotiation):
    """JSON (or an event stream) whatever the client's Accept says: SSE libraries and OpenAI clients
    send Accept headers of their own, and a stream is never refused for them (SPEC §8.1)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class GavelAPIView(APIView):
    """Base view: body-size limit before parsing, request id as the correlation id."""

    body_limit_setting = "GAVEL_MAX_TEXT_BYTES"

    def body_limit(self) -> int:
        return settings.GAVEL_MAX_TEXT_BYTES

    def initial(self, request, *args, **kwargs):
        if self.body_too_large(request):
            raise TooLarge(
                _("The request body is larger than %(limit)d bytes.") % {"limit": self.body_limit()},
                fields={"body": [_("At most %(limit)d bytes (%(setting)s).") % {
                    "limit": self.body_limit(), "setting": self.body_limit_setting}]},
            )
        super().initial(request, *args, **kwargs)

    def body_too_large(self, request) -> bool:
        """The declared length first (nothing read), then the body itself: a missing or understated
        Content-Length is no way past the limit."""
        limit = self.body_limit()
        try:
            if int(request.META.get("CONTENT_LENGTH") or "0") > limit:
                return True
        except ValueError:
            pass
        try:
            # Django reads at most the declared length (WSGI) and refuses one over
            # DATA_UPLOAD_MAX_MEMORY_SIZE with RequestDataTooBig.
            return len(request.body) > limit
        except RequestDataTooBig:
            return True

    def parsed(self, serializer_class, request):
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @staticmethod
    def with_policy_version(response, version: int):
        response["X-Gavel-Policy-Version"] = str(version)
        return response

    @staticmethod
    def with_outcome(response, body: dict | None):
        """The result in headers too (SPEC §11.1), for clients that drop unknown body members: on every
        answer that is not a live stream (`body` None)."""
        if body is not None:
            response["X-Gavel-Outcome"] = body["outcome"]
            response["X-Gavel-Screening"] = body["id"]
        return response


# Swagger's first "Execute" sends these: each is a valid request for the demo policy (`manage.py seed_demo`).
# demo-writer is answered by litellm's mock_response, so the completion and the task need no model server.
SCREENING_EXAMPLE = {"configuration": "demo", "text": "Dear Mandant, we will call you back on Monday."}
COMPLETION_EXAMPLE = {"configuration": "demo-writer",
                      "messages": [{"role": "user", "content": "A short meta description for a planning tool."}]}
TASK_EXAMPLE = {"kind": "queued_task", "configuration": "demo-writer",
                "messages": [{"role": "user", "content": "A product text for a planning tool."}]}


class ScreeningsView(GavelAPIView):
    @extend_schema(
        request=serializers.ScreeningRequestSerializer,
        responses={200: serializers.ScreeningResponseSerializer, **ERRORS, 404: OpenApiResponse(
            serializers.ErrorSerializer, description="An unknown configuration (in `configuration` or `also`), "
                                                     "or `served_by` naming no provider (`unknown_provider`).")},
        summary="Screen an output without generating",
        examples=[OpenApiExample("Screen a text for the demo policy", request_only=True, value=SCREENING_EXAMPLE)],
    )
    def post(self, request):
        data = self.parsed(serializers.ScreeningRequestSerializer, request)
        screening, version = services.screen(
            data, consumer=request.user, actor=f"consumer:{request.user.name}",
            reader_language=reader_language(request), correlation_id=request.correlation_id,
        )
        body = screening.as_response(version)
        return self.with_outcome(self.with_policy_version(Response(body), version), body)


class CompletionsView(GavelAPIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        request=serializers.CompletionRequestSerializer,
        responses={
            200: serializers.CompletionResponseSerializer,
            502: OpenApiResponse(serializers.ErrorSerializer),
            504: OpenApiResponse(serializers.ErrorSerializer),
            **ERRORS,
        },
        summary="Generate through a configuration and screen the answer",
        examples=[OpenApiExample("Generate with the demo writer", request_only=True, value=COMPLETION_EXAMPLE)],
        description="With `stream: true` the answer is Server-Sent Events: delta, hints, blocked, error, done.",
    )
    def post(self, request):
        data = self.parsed(serializers.CompletionRequestSerializer, request)
        call = completions.prepare(
            data, consumer=request.user, actor=f"consumer:{request.user.name}",
            reader_language=reader_language(request), correlation_id=request.correlation_id,
        )
        if data.get("stream"):
            # Open before answering, so an error before the first chunk is an ordinary JSON error.
            steps, done = completions.planned_steps(call, completions.open_stream(call))
            events = (completions.sse(name, step) for name, step in steps)
            response = StreamingHttpResponse(events, content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
        else:
            done = completions.run(call)
            response = Response(done)
        return self.with_outcome(self.with_policy_version(response, call.policy_version), done)


class RuleStatsView(GavelAPIView):
    """Each rule's and term's numbers as editors see them, for charting elsewhere."""

    permission_classes = [IsAdminConsumer]

    @extend_schema(
        parameters=[serializers.RuleStatsQuerySerializer],
        responses={200: serializers.RuleStatsSerializer, **ERRORS},
        summary="Per-rule and per-term numbers from editors' feedback (administrator consumers only)",
    )
    def get(self, request):
        params = request.query_params
        unknown = sorted(set(params) - {"days"})
        if unknown:
            raise BadInput(_("Unknown query parameter."), fields={k: [_("Unknown field.")] for k in unknown})
        try:
            days = int(params.get("days", 30))
        except ValueError:
            days = 0
        if not 1 <= days <= MAX_DAYS:
            raise BadInput(_("days is not a number of days from 1 to 365."),
                           fields={"days": [_("Give a whole number from 1 to 365.")]})
        return Response({"days": days, "rules": rule_stats(days)})


class EventsView(GavelAPIView):
    permission_classes = [IsAdminConsumer]

    @extend_schema(
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="ISO 8601 date-time; events at or after it"),
            OpenApiParameter("decision", str, enum=GovernanceEvent.Decision.values),
            OpenApiParameter("configuration", str, pattern=SLUG_PATTERN, description="a configuration identifier"),
            OpenApiParameter("limit", int, description="at most 1000 (a larger number reads 1000), default 100; "
                                                       "a number below 1 reads 1"),
        ],
        responses={200: serializers.GovernanceEventSerializer(many=True), **ERRORS},
        summary="Read the governance log (administrator consumers only)",
    )
    def get(self, request):
        events = GovernanceEvent.objects.all()
        params = request.query_params
        unknown = sorted(set(params) - {"since", "decision", "configuration", "limit"})
        if unknown:
            raise BadInput(_("Unknown query parameter."), fields={k: [_("Unknown field.")] for k in unknown})
        if "since" in params:
            try:
                since = parse_datetime(params["since"])
            except ValueError:  # well-formed but impossible, e.g. month 13
                since = None
            if since is None:
                raise BadInput(_("since is not a date-time."), fields={"since": [_("Give an ISO 8601 date-time.")]})
            events = events.filter(at__gte=as_utc(since))
        if "decision" in params:
            if params["decision"] not in GovernanceEvent.Decision.values:
                raise BadInput(_("Unknown decision."), fields={"decision": [_("Unknown decision.")]})
            events = events.filter(decision=params["decision"])
        if "configuration" in params:
            if not re.fullmatch(SLUG_PATTERN, params["configuration"]):
                raise BadInput(_("Not a configuration identifier."),
                               fields={"configuration": [_("Give a configuration identifier.")]})
            events = events.filter(configuration=params["configuration"])
        try:
            limit = min(max(int(params.get("limit", 100)), 1), 1000)
        except ValueError:
            raise BadInput(_("limit is not a number."), fields={"limit": [_("Give a whole number.")]})
        rows = events.values("id", "at", "correlation_id", "decision", "configuration",
                             "provider", "model", "actor", "mode", "detail", check=F("check_name"))[:limit]
        return Response(serializers.GovernanceEventSerializer(rows, many=True).data)


def as_utc(moment: datetime) -> datetime:
    """In UTC, which every database stores: PostgreSQL refuses offsets past ±15:59 that ISO 8601
    allows (+22:07). A moment beyond the calendar's ends in UTC is clamped to that end."""
    if moment.tzinfo is None:
        moment = timezone.make_aware(moment)
    try:
        return moment.astimezone(dt_timezone.utc)
    except OverflowError:
        edge = datetime.max if moment.year > 1 else datetime.min
        return edge.replace(tzinfo=dt_timezone.utc)


class YAMLOrJSONParser(JSONParser):
    """PUT policy takes a whole document as JSON or YAML."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(_("The policy document is not UTF-8."), code="malformed") from exc
        try:
            if media_type and "json" in media_type:
                if nesting_beyond(text, MAX_BODY_DEPTH) is not None:  # before json.loads recurses into it
                    raise DocumentTooLarge(str(BODY_TOO_DEEP))
                document = json.loads(text)
                check_document(document)
                return document
            return load_yaml(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise BadInput(_("The policy document does not parse: %(e)s") % {"e": exc}, code="malformed") from exc
        except RecursionError as exc:
            raise BadInput(_("The policy document is nested too deeply."), code="malformed") from exc


# The document's shape is the policy schema itself (governance/policy/schema.py, served at
# /api/v1/policy/schema.json): what it allows the import reads; what breaks it is a 400 naming each path;
# what keeps it but cannot be done (a reference to no record) is a 422 naming each path (issue 41).
POLICY_DOCUMENT = policy_schema.openapi_schema()
POLICY_DOCUMENT["description"] += " PUT: records of a section it holds but does not name are removed."
# The answers of an operation that imports a policy document.
UNPROCESSABLE = {422: OpenApiResponse(serializers.ErrorSerializer, description=(
    "The document keeps the policy schema, but what it says cannot be done (a reference to no record, a name "
    "given twice, a pattern rule whose samples disagree): `invalid_policy`, with every path."))}


class PolicySchemaView(APIView):
    """The policy document's JSON Schema, for editors (`# yaml-language-server: $schema=<this URL>`) and
    generated clients. No token, like schema/: it holds the format, not the policy."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(responses={200: OpenApiTypes.OBJECT}, summary="The policy document's JSON Schema",
                   description="JSON Schema 2020-12; what it allows PUT policy reads, what breaks it is a 400 "
                               "naming each path (the rest is described in it and answered 422).")
    def get(self, request):
        return Response(policy_schema.published(request.build_absolute_uri()))


class PolicyView(GavelAPIView):
    permission_classes = [IsAdminConsumer]
    parser_classes = [YAMLOrJSONParser]

    @extend_schema(
        parameters=[OpenApiParameter("version", {"type": "integer", "minimum": 1},
                                     description="A kept policy version (1 or more): its whole document.")],
        responses={200: OpenApiTypes.OBJECT, **ERRORS}, summary="Export the policy document")
    def get(self, request):
        wanted = request.query_params.get("version")
        if wanted is None:
            return self.with_policy_version(Response(policy.export_policy()), PolicyVersion.current())
        number = _positive_int(wanted, "version")
        # A number past what the version column holds names no kept version (and must not reach the query).
        text = versions.document_of(number) if number < 2**63 else None
        if text is None:
            raise UnknownRecord(_("Policy version %(number)s is not kept.") % {"number": number},
                                code="unknown_version")
        return self.with_policy_version(Response(yaml.safe_load(text)), number)

    @extend_schema(
        request={"application/json": POLICY_DOCUMENT, "application/yaml": POLICY_DOCUMENT},
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiResponse(OpenApiTypes.OBJECT, description=(
                       "GAVEL_POLICY_FOUR_EYES=1: the document became a draft (`draft`, with its `revision`, and "
                       "`changes`) that another approver publishes; nothing is live.")),
                   **ERRORS, 409: OpenApiResponse(serializers.ErrorSerializer), **UNPROCESSABLE},
        summary="Replace the policy document (atomic; nothing is written when any path has an error)",
        description="With dry_run=true nothing is written and the answer adds the examples before and after and "
                    "a replay of retained task texts (counts of at least GAVEL_REPORT_MIN_TEXTS texts). A draft "
                    "that makes a passing example fail is refused (409 examples_regressed) unless "
                    "allow_regressions=true. With four eyes (GAVEL_POLICY_FOUR_EYES=1) the document is not "
                    "released: it becomes this consumer's draft (202), published by another approver.",
        parameters=[
            OpenApiParameter("dry_run", bool, description="Report what the document would do; write nothing."),
            OpenApiParameter("allow_regressions", bool, description="Apply even when passing examples would fail."),
            OpenApiParameter("replay", {"type": "integer", "minimum": 0},
                             description="Dry run: how many recent task texts to replay (500)."),
            OpenApiParameter("replay_judges", bool, description="Dry run: ask the judges in the replay too."),
            OpenApiParameter("cost_cap", {"type": "number", "format": "double", "minimum": 0},
                             description="Dry run with judges: stop asking them past this cost (0 or more)."),
        ],
    )
    def put(self, request):
        if request.data is None or request.data == {} and not request.body.strip():
            # An empty body would import an empty policy and, pruning, remove every record.
            raise BadInput(_("Send the whole policy document."), code="invalid_policy",
                           fields={"document": [_("The body is empty.")]})
        params = request.query_params
        # Every parameter is read (and refused when malformed) whether or not this request uses it.
        dry_run, allow = _flag(params, "dry_run"), _flag(params, "allow_regressions")
        # More than the retained tasks is all of them; the bound keeps the query's LIMIT in range.
        replay = min(_positive_int(params.get("replay", release.replaying.DEFAULT_REPLAY), "replay", zero=True),
                     MAX_REPLAY)
        replay = release.replaying.narrowest_window(replay)  # never fewer than GAVEL_REPORT_MIN_TEXTS
        judges = _flag(params, "replay_judges")
        cost_cap = _number(params.get("cost_cap", "1.0"), "cost_cap")
        try:
            if dry_run:
                plan = release.plan_release(request.data, prune=True, replay=replay, replay_judges=judges,
                                            cost_cap=cost_cap if judges else 0.0)
                # Counts only: an administrator consumer reads no other consumer's tasks (issue 25).
                return self.with_policy_version(Response(plan.as_dict(task_ids=False)), PolicyVersion.current())
            released = release_paths.release_or_draft(request.data, actor=request.user, source="api", prune=True,
                                                      title="PUT /api/v1/policy", allow_regressions=allow)
        except policy.PolicyInvalid as exc:
            raise policy_refused(exc, _("The policy document has errors; nothing was written."),
                                 fields=exc.errors) from exc
        if isinstance(released, release_paths.Proposed):
            # Four eyes: the document is a draft another approver publishes (202: accepted, not live).
            body = {"released": False, "draft": draft_facts(released.draft),
                    "changes": [{"section": c["section"], "name": c["name"], "action": c["action"]}
                                for c in released.draft.changes]}
            return self.with_policy_version(Response(body, status=202), PolicyVersion.current())
        report, plan = released
        body = report.as_dict()
        body["regressions_accepted"] = plan.regressions if plan else []
        return self.with_policy_version(Response(body), PolicyVersion.current())


def _flag(params, name: str) -> bool:
    values = params.getlist(name) or ["false"]
    value = values[-1].lower()
    if len(values) > 1:
        raise BadInput(_("Give this parameter once."), fields={name: [_("Give this parameter once.")]})
    if value not in ("true", "false", "1", "0"):
        raise BadInput(_("Give true or false."), fields={name: [_("Give true or false.")]})
    return value in ("true", "1")


MAX_REPLAY = 100_000  # the most task texts one dry run replays


def _positive_int(value, name: str, *, zero: bool = False) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < (0 if zero else 1):
        raise BadInput(_("Give a whole number."), fields={name: [_("Give a whole number.")]})
    return number


def _number(value, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if not number >= 0:
        raise BadInput(_("Give a number."), fields={name: [_("Give a number.")]})
    return number


TASK_ERRORS = {**ERRORS, 409: OpenApiResponse(serializers.ErrorSerializer)}
TASK_PAGE_SIZE = 50


def own_task(request, task_id) -> Task:
    """The calling consumer's task; another consumer's is as unknown as a missing one (404)."""
    task = Task.objects.select_related("reviewed_by").filter(pk=task_id, consumer=request.user).first()
    if task is None:
        raise UnknownRecord(_("Unknown task."), code="not_found", fields={"id": [_("Unknown task.")]})
    return task


class TasksView(GavelAPIView):
    @extend_schema(
        request=serializers.TaskRequestSerializer,
        responses={202: serializers.TaskSerializer, **ERRORS},
        summary="Queue a task or a field fill",
        examples=[OpenApiExample("Queue a text for the demo writer", request_only=True, value=TASK_EXAMPLE)],
        description="Validated like a completion before anything is queued; a worker generates and screens it.",
    )
    def post(self, request):
        # A kind the consumer was not granted is refused as on every other path (403), before the
        # request's own check says a task is a queued_task or a field_fill.
        if isinstance(request.data, dict):
            services.require_kind(request.user, request.data.get("kind"))
        data = self.parsed(serializers.TaskRequestSerializer, request)
        task = queue.submit(data, consumer=request.user, actor=f"consumer:{request.user.name}",
                            correlation_id=request.correlation_id)
        task.refresh_from_db()  # eager mode (the embedded default) has already run it
        return Response(queue.task_json(task), status=202)

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=Task.Status.values),
            OpenApiParameter("kind", str, enum=Task.Kind.values),
            OpenApiParameter("configuration", str, pattern=SLUG_PATTERN, description="a configuration identifier"),
            OpenApiParameter("page", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                             description="1-based page number"),
        ],
        responses={200: serializers.TaskPageSerializer, **ERRORS},
        summary="List the calling consumer's tasks, newest first",
        operation_id="tasks_list",
    )
    def get(self, request):
        params = request.query_params
        unknown = sorted(set(params) - {"status", "kind", "configuration", "page"})
        if unknown:
            raise BadInput(_("Unknown query parameter."), fields={k: [_("Unknown field.")] for k in unknown})
        tasks = Task.objects.filter(consumer=request.user).select_related("reviewed_by")
        for name, choices in (("status", Task.Status.values), ("kind", Task.Kind.values)):
            if name in params:
                if params[name] not in choices:
                    raise BadInput(_("Unknown %(name)s.") % {"name": name},
                                   fields={name: [_("Choose one of: %s") % ", ".join(choices)]})
                tasks = tasks.filter(**{name: params[name]})
        if "configuration" in params:
            if not re.fullmatch(SLUG_PATTERN, params["configuration"]):
                raise BadInput(_("Not a configuration identifier."),
                               fields={"configuration": [_("Give a configuration identifier.")]})
            tasks = tasks.filter(configuration=params["configuration"])
        try:
            page = int(params.get("page", 1))
            if not 1 <= page <= MAX_PAGE:  # past it, the database's OFFSET would overflow
                raise ValueError
        except ValueError:
            raise BadInput(_("page is not a page number."), fields={"page": [_("Give a whole number from 1.")]})
        count = tasks.count()
        rows = tasks.order_by("-created", "-pk")[(page - 1) * TASK_PAGE_SIZE: page * TASK_PAGE_SIZE]

        def link(number):
            query = params.copy()
            query["page"] = number
            return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

        return Response({
            "count": count,
            "next": link(page + 1) if page * TASK_PAGE_SIZE < count else None,
            "previous": link(page - 1) if page > 1 else None,
            "results": [queue.task_json(task) for task in rows],
        })


class TaskView(GavelAPIView):
    @extend_schema(responses={200: serializers.TaskSerializer, **ERRORS}, summary="Read one of your tasks")
    def get(self, request, task_id):
        return Response(queue.task_json(own_task(request, task_id)))


class TaskCancelView(GavelAPIView):
    @extend_schema(request=None, responses={200: serializers.TaskSerializer, **TASK_ERRORS},
                   summary="Cancel a queued task (409 not_cancellable once a worker claimed it)")
    def post(self, request, task_id):
        task = queue.cancel(own_task(request, task_id), actor=f"consumer:{request.user.name}")
        return Response(queue.task_json(task))
