"""The Responses API's view (SPEC §11.6): parse, call completions, render the Responses API's shapes."""
import time

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from governance.api.views import reader_language
from governance.errors import BadInput
from governance.protocols.openai_chat.serializers import OpenAIErrorSerializer
from governance.protocols.openai_chat.views import ERRORS, OpenAIView, shown_to
from governance.protocols.openai_responses import kept, parameters, serializers, translate
from governance.protocols.openai_responses import schema  # noqa: F401  (registers the request's OpenAPI extension)
from governance.runs import completions


class ResponsesView(OpenAIView):
    @extend_schema(
        request=serializers.ResponsesRequestSerializer,
        responses={
            200: OpenApiResponse(
                serializers.ResponsesResponseSerializer,
                description="A `response`; with `stream: true`, `text/event-stream` of the Responses API's typed "
                            "events (`response.created` … `response.completed` / `response.incomplete`), held or "
                            "live, the last carrying the response with `gavel`. A block is HTTP 200 with status "
                            "`incomplete`, incomplete_details.reason `content_filter` and one message whose only "
                            "part is a `refusal` with the block message — or, for a consumer whose blocks show as "
                            "a message, `completed` with the block message as `output_text`. What the request "
                            "held that never reaches the model (client_metadata, hosted tools, ...) is dropped, "
                            "one `gavel.checks` entry each.",
            ),
            502: OpenApiResponse(OpenAIErrorSerializer, description="Every provider failed (`api_error`)"),
            504: OpenApiResponse(OpenAIErrorSerializer, description="Every provider timed out"),
            **ERRORS,
        },
        tags=["openai"],
        operation_id="openai_responses_create",
        summary="OpenAI Responses: generate through a configuration and screen the answer",
        description="The run of POST /api/v1/completions in the OpenAI Responses API. Gavel keeps the output items "
                    "it returned (for the token that received them, as long as task texts) so `item_reference` "
                    "works; it keeps no responses: `previous_response_id` is refused, send the conversation.",
    )
    def post(self, request):
        consumer_id = request.user.pk
        references = kept.look_up(consumer_id, kept.reference_ids(request.data))
        data, options, stream, echo, notes = serializers.parse_responses_request(request.data, references)
        shown = shown_to(request.user, notes.namespaces)
        call = completions.prepare(
            data, consumer=request.user, actor=f"consumer:{request.user.name}",
            reader_language=reader_language(request), correlation_id=request.correlation_id,
        )
        call.surface = "openai_responses"  # its evidence records name the protocol
        call.options.update(options)
        call.request_checks.extend(notes.dropped)  # what the request dropped leads the answer's checks (§11.9)
        try:
            completions.check_client_parameters(call)
        except BadInput as exc:
            exc.fields = {parameters.CLIENT_NAMES.get(name, name): value for name, value in exc.fields.items()}
            raise
        model, created_at = data["configuration"], int(time.time())
        if stream:
            # Opened before answering, so an error before the first event is an ordinary error response.
            steps, done = completions.planned_steps(call, completions.open_stream(call))
            events = translate.event_stream(steps,
                                            correlation_id=call.correlation_id, model=model,
                                            created_at=created_at, echo=echo, shown=shown,
                                            on_output=lambda output: kept.keep(consumer_id, output))
            response = StreamingHttpResponse(events, content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
        else:
            done = completions.run(call)
            body = translate.response_object(done, model=model, created_at=created_at, echo=echo, shown=shown)
            kept.keep(consumer_id, body["output"])
            response = Response(body)
        return self.with_outcome(self.with_policy_version(response, call.policy_version), done)
