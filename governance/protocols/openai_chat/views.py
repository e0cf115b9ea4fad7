"""The gateway's views (SPEC §11.5): parse the OpenAI request, call completions, render OpenAI's shapes."""
import time

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from governance.runs import completions

from governance.screening import service as services
from governance.api.errors import exception_handler
from governance.api.views import AnyAccept, GavelAPIView, reader_language
from governance.protocols.openai_chat import schema  # noqa: F401  (registers the request's OpenAPI description)
from governance.protocols import presentation
from governance.protocols.openai_chat import functions, serializers, translate
from governance.protocols.openai_chat.errors import openai_error

ERRORS = {status: OpenApiResponse(serializers.OpenAIErrorSerializer, description=text) for status, text in (
    (400, "Bad input (`invalid_request_error`)"),
    (401, "No valid token (`authentication_error`)"),
    (403, "Model not granted to the token (`permission_error`)"),
    (404, "Unknown model (`not_found_error`)"),
    (413, "Body too large (`invalid_request_error`)"),
    (429, "Throttled or over budget (`rate_limit_error`)"),
)}
# The model object's `created`: configurations keep no creation time, and clients only need an int.
CREATED = 0


def openai_exception_handler(exc, context):
    """Gavel's API error, statuses and codes kept, in OpenAI's body."""
    response = exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "error" in response.data:
        response.data = openai_error(response.status_code, response.data["error"])
        if response.data["error"]["code"] == "budget_exceeded":
            # Today's cap does not lift in the seconds an SDK waits before retrying.
            response["x-should-retry"] = "false"
    return response


class OpenAIView(GavelAPIView):
    content_negotiation_class = AnyAccept

    def get_exception_handler(self):
        return openai_exception_handler


def shown_to(consumer, namespaces: dict | None = None) -> translate.Shown:
    """How answers are shown to this consumer (SPEC §11.9: its blocks_as and hints_as)."""
    return translate.Shown(blocks_as_message=presentation.blocks_as_message(consumer),
                           note=lambda body: presentation.hint_note(body, consumer), namespaces=namespaces or {})


def model_object(identifier: str) -> dict:
    return {"id": identifier, "object": "model", "created": CREATED, "owned_by": "gavel"}


class ModelsView(OpenAIView):
    @extend_schema(responses={200: serializers.OpenAIModelListSerializer, **ERRORS}, tags=["openai"],
                   operation_id="openai_models_list",
                   summary="OpenAI: the configurations granted to the token, as models",
                   description="Each model's `id` is a configuration identifier to send as `model`.")
    def get(self, request):
        identifiers = request.user.configurations.order_by("identifier").values_list("identifier", flat=True)
        return Response({"object": "list", "data": [model_object(i) for i in identifiers]})


class ModelView(OpenAIView):
    @extend_schema(responses={200: serializers.OpenAIModelSerializer, **ERRORS}, tags=["openai"],
                   operation_id="openai_models_retrieve",
                   summary="OpenAI: one granted configuration, as a model",
                   description="404 for an unknown configuration, 403 for one not granted to the token.")
    def get(self, request, identifier):
        configuration, _also = services.resolve_configurations(identifier, [], request.user)
        return Response(model_object(configuration.identifier))


class ChatCompletionsView(OpenAIView):
    @extend_schema(
        request=serializers.OpenAIChatRequestSerializer,
        responses={
            200: OpenApiResponse(
                serializers.OpenAIChatCompletionSerializer,
                description="A chat.completion; with `stream: true`, `text/event-stream` of chat.completion.chunk "
                            "lines ending `data: [DONE]`, the last chunk carrying `gavel`. A block is HTTP 200 with "
                            "finish_reason `content_filter`, content null and `gavel.block` — or, for a consumer "
                            "whose blocks show as a message, finish_reason `stop` with the block message as "
                            "content (`gavel.block` still set).",
            ),
            502: OpenApiResponse(serializers.OpenAIErrorSerializer, description="Every provider failed (`api_error`)"),
            504: OpenApiResponse(serializers.OpenAIErrorSerializer, description="Every provider timed out"),
            **ERRORS,
        },
        tags=["openai"],
        operation_id="openai_chat_completions_create",
        summary="OpenAI: generate through a configuration and screen the answer",
        description="The run of POST /api/v1/completions in the OpenAI Chat Completions protocol.",
    )
    def post(self, request):
        body, legacy = functions.as_tools(request.data)
        data, options, stream = serializers.parse_chat_request(body)
        call = completions.prepare(
            data, consumer=request.user, actor=f"consumer:{request.user.name}",
            reader_language=reader_language(request), correlation_id=request.correlation_id,
        )
        call.options.update(options)
        call.surface = "openai_chat"
        completions.check_client_parameters(call)
        model, created = data["configuration"], int(time.time())
        if stream:
            # Opened before answering, so an error before the first chunk is an ordinary error response.
            steps, done = completions.planned_steps(call, completions.open_stream(call))
            chunks = translate.chunk_stream(steps, correlation_id=call.correlation_id, model=model, created=created,
                                            shown=shown_to(request.user))
            if legacy:
                chunks = functions.chunks_as_function_call(chunks)
            response = StreamingHttpResponse(chunks, content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
        else:
            done = completions.run(call)
            completion = translate.chat_completion(done, model=model, created=created, shown=shown_to(request.user))
            response = Response(functions.completion_as_function_call(completion) if legacy else completion)
        return self.with_outcome(self.with_policy_version(response, call.policy_version), done)
