"""The Messages API's views (SPEC §11.7): parse the Anthropic request, call completions, render Anthropic's shapes."""
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from governance.api.auth import ConsumerTokenAuthentication
from governance.api.errors import exception_handler
from governance.api.views import AnyAccept, GavelAPIView, reader_language
from governance.errors import BadInput
from governance.protocols.anthropic import request as messages_request
from governance.protocols.anthropic import serializers, translate
from governance.protocols.anthropic.auth import ApiKeyAuthentication
from governance.protocols.anthropic.errors import anthropic_error, client_name
from governance.runs import completions
from governance.screening import service as services

ERRORS = {status: OpenApiResponse(serializers.AnthropicErrorSerializer, description=text) for status, text in (
    (400, "Bad input (`invalid_request_error`)"),
    (401, "No valid key (`authentication_error`)"),
    (403, "Model not granted to the key (`permission_error`)"),
    (404, "Unknown model (`not_found_error`)"),
    (413, "Body too large (`request_too_large`)"),
    (429, "Throttled or over budget (`rate_limit_error`)"),
)}
# The model object's `created_at`: configurations keep no creation time, and clients only need a date.
CREATED_AT = "1970-01-01T00:00:00Z"


def anthropic_exception_handler(exc, context):
    """Gavel's API error, statuses kept, in Anthropic's body."""
    response = exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "error" in response.data:
        response.data = anthropic_error(response.status_code, response.data["error"])
        if response.data["error"]["code"] == "budget_exceeded":
            # Today's cap does not lift in the seconds an SDK waits before retrying.
            response["x-should-retry"] = "false"
    return response


class AnthropicView(GavelAPIView):
    authentication_classes = [ApiKeyAuthentication, ConsumerTokenAuthentication]
    content_negotiation_class = AnyAccept

    def get_exception_handler(self):
        return anthropic_exception_handler


def model_object(identifier: str) -> dict:
    return {"type": "model", "id": identifier, "display_name": identifier, "created_at": CREATED_AT}


class ModelsView(AnthropicView):
    @extend_schema(responses={200: serializers.AnthropicModelListSerializer, **ERRORS}, tags=["anthropic"],
                   operation_id="anthropic_models_list",
                   summary="Anthropic: the configurations granted to the key, as models",
                   description="Each model's `id` is a configuration identifier to send as `model`.")
    def get(self, request):
        identifiers = list(request.user.configurations.order_by("identifier").values_list("identifier", flat=True))
        return Response({"data": [model_object(i) for i in identifiers], "has_more": False,
                         "first_id": identifiers[0] if identifiers else None,
                         "last_id": identifiers[-1] if identifiers else None})


class ModelView(AnthropicView):
    @extend_schema(responses={200: serializers.AnthropicModelSerializer, **ERRORS}, tags=["anthropic"],
                   operation_id="anthropic_models_retrieve",
                   summary="Anthropic: one granted configuration, as a model",
                   description="404 for an unknown configuration, 403 for one not granted to the key.")
    def get(self, request, identifier):
        configuration, _also = services.resolve_configurations(identifier, [], request.user)
        return Response(model_object(configuration.identifier))


class MessagesView(AnthropicView):
    @extend_schema(
        request=serializers.AnthropicMessagesRequestSerializer,
        responses={
            200: OpenApiResponse(
                serializers.AnthropicMessageSerializer,
                description="A message; with `stream: true`, `text/event-stream` of Anthropic's events "
                            "(message_start … message_stop), `message_delta` carrying `gavel`. A block is HTTP 200 "
                            "with stop_reason `refusal`, one text block with Gavel's message and `gavel.block`.",
            ),
            502: OpenApiResponse(serializers.AnthropicErrorSerializer, description="Every provider failed (`api_error`)"),
            504: OpenApiResponse(serializers.AnthropicErrorSerializer, description="Every provider timed out"),
            **ERRORS,
        },
        tags=["anthropic"],
        operation_id="anthropic_messages_create",
        summary="Anthropic: generate through a configuration and screen the answer",
        description="The run of POST /api/v1/completions in the Anthropic Messages protocol (also at /v1/messages).",
    )
    def post(self, request):
        parsed = messages_request.parse_messages_request(request.data)
        data, stream = parsed.data, parsed.stream
        call = completions.prepare(
            data, consumer=request.user, actor=f"consumer:{request.user.name}",
            reader_language=reader_language(request), correlation_id=request.correlation_id,
        )
        call.surface = "anthropic"  # its evidence records name the protocol
        call.options.update(parsed.options)
        completions.send_where_taken(call, parsed.optional, parsed.dropped, client_name)
        try:
            completions.check_client_parameters(call)
        except BadInput as exc:
            # The call service names the parameters as litellm does (`stop`): the client's names.
            exc.fields = {client_name(name): found for name, found in exc.fields.items()}
            raise
        model = data["configuration"]
        if stream:
            # Opened before answering, so an error before the first event is an ordinary error response.
            try:
                opened = completions.open_stream(call)
            except BadInput as exc:
                exc.fields = {client_name(name): found for name, found in exc.fields.items()}
                raise
            steps, done = completions.planned_steps(call, opened)
            events = translate.event_stream(steps, correlation_id=call.correlation_id, model=model,
                                            consumer=request.user)
            response = StreamingHttpResponse(events, content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
        else:
            done = completions.run(call)
            response = Response(translate.message(done, model=model, consumer=request.user))
        return self.with_outcome(self.with_policy_version(response, call.policy_version), done)


class CountTokensView(AnthropicView):
    @extend_schema(
        request=serializers.AnthropicCountTokensRequestSerializer,
        responses={200: serializers.AnthropicTokenCountSerializer, **ERRORS},
        tags=["anthropic"],
        operation_id="anthropic_messages_count_tokens",
        summary="Anthropic: count a request's input tokens",
        description="The body of POST messages (max_tokens and stream not needed), read the same way; counted by "
                    "litellm's token counter for the configuration's model, its system prompt included. No "
                    "provider is asked. Also at /v1/messages/count_tokens.",
    )
    def post(self, request):
        parsed = messages_request.parse_messages_request(request.data, count_only=True)
        return Response({"input_tokens": completions.count_input_tokens(parsed.data, consumer=request.user)})
