"""REST API views of batches (SPEC §10.1): submit, read, page through the tasks, cancel."""
import io

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from governance.api import serializers
from governance.api.batch_body import BatchBodyParser
from governance.api.views import ERRORS, MAX_PAGE, TASK_PAGE_SIZE, GavelAPIView
from governance.errors import BadInput, UnknownRecord
from governance.models import Batch, Task
from governance.work import batches
from governance.work import queue


def own_batch(request, batch_id) -> Batch:
    batch = Batch.objects.filter(pk=batch_id, consumer=request.user).first()
    if batch is None:
        raise UnknownRecord(_("Unknown batch."), code="not_found", fields={"id": [_("Unknown batch.")]})
    return batch


def page_of(request, rows, allowed: set, as_json):
    params = request.query_params
    unknown = sorted(set(params) - allowed - {"page"})
    if unknown:
        raise BadInput(_("Unknown query parameter."), fields={k: [_("Unknown field.")] for k in unknown})
    try:
        page = int(params.get("page", 1))
        if not 1 <= page <= MAX_PAGE:
            raise ValueError
    except ValueError:
        raise BadInput(_("page is not a page number."), fields={"page": [_("Give a whole number from 1.")]})
    count = rows.count()
    chunk = rows[(page - 1) * TASK_PAGE_SIZE: page * TASK_PAGE_SIZE]

    def link(number):
        query = params.copy()
        query["page"] = number
        return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

    return Response({"count": count, "next": link(page + 1) if page * TASK_PAGE_SIZE < count else None,
                     "previous": link(page - 1) if page > 1 else None, "results": [as_json(r) for r in chunk]})


PAGE_PARAMETER = OpenApiParameter("page", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                                  description="1-based page number")


class BatchesView(GavelAPIView):
    parser_classes = [BatchBodyParser]  # the body's values are counted before it is parsed
    body_limit_setting = "GAVEL_MAX_BATCH_BYTES"

    def body_limit(self) -> int:
        return settings.GAVEL_MAX_BATCH_BYTES

    def initial(self, request, *args, **kwargs):
        # A batch may be larger than one text (DATA_UPLOAD_MAX_MEMORY_SIZE, which Django applies when
        # the body is read): read it here, up to the batch limit, and hand it on as the body.
        raw = request._request
        try:
            length = int(raw.META.get("CONTENT_LENGTH") or "0")
        except ValueError:
            length = 0
        if raw.method == "POST" and 0 < length <= self.body_limit() and not hasattr(raw, "_body"):
            raw._body = raw.read(length)
            raw._stream = io.BytesIO(raw._body)
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request=serializers.BatchRequestSerializer,
        responses={202: serializers.BatchSerializer, **ERRORS},
        summary="Queue up to 10,000 tasks at once",
        description="Every item is validated first (a 400 names items[i] and its field; nothing is queued), "
                    "then all are queued together. The batch shows its progress and calls back once at the end.",
    )
    def post(self, request):
        data = self.parsed(serializers.BatchRequestSerializer, request)
        batch = batches.submit(data, consumer=request.user, actor=f"consumer:{request.user.name}",
                               correlation_id=request.request_id)
        batch.refresh_from_db()  # eager mode (the embedded default) has already run it
        return Response(batches.batch_json(batch), status=202)

    @extend_schema(
        parameters=[OpenApiParameter("finished", bool, description="true: finished batches; false: in progress"),
                    PAGE_PARAMETER],
        responses={200: serializers.BatchPageSerializer, **ERRORS},
        summary="List the calling consumer's batches, newest first", operation_id="batches_list",
    )
    def get(self, request):
        rows = Batch.objects.filter(consumer=request.user).order_by("-created", "-pk")
        finished = request.query_params.get("finished")
        if finished is not None:
            if finished not in ("true", "false"):
                raise BadInput(_("finished is true or false."), fields={"finished": [_("Give true or false.")]})
            rows = rows.filter(finished_at__isnull=finished == "false")
        return page_of(request, rows, {"finished"}, batches.batch_json)


class BatchView(GavelAPIView):
    @extend_schema(responses={200: serializers.BatchSerializer, **ERRORS}, summary="Read one of your batches")
    def get(self, request, batch_id):
        return Response(batches.batch_json(own_batch(request, batch_id)))


class BatchTasksView(GavelAPIView):
    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=Task.Status.values), PAGE_PARAMETER],
        responses={200: serializers.TaskPageSerializer, **ERRORS},
        summary="List a batch's tasks, oldest first", operation_id="batch_tasks_list",
    )
    def get(self, request, batch_id):
        rows = Task.objects.filter(batch=own_batch(request, batch_id)).select_related("reviewed_by")
        status_filter = request.query_params.get("status")
        if status_filter is not None:
            if status_filter not in Task.Status.values:
                raise BadInput(_("Unknown %(name)s.") % {"name": "status"},
                               fields={"status": [_("Choose one of: %s") % ", ".join(Task.Status.values)]})
            rows = rows.filter(status=status_filter)
        return page_of(request, rows.order_by("created", "pk"), {"status"}, queue.task_json)


class BatchCancelView(GavelAPIView):
    @extend_schema(request=None, responses={200: serializers.BatchSerializer, **ERRORS},
                   summary="Cancel what is still queued in a batch (claimed tasks run on)")
    def post(self, request, batch_id):
        batch = own_batch(request, batch_id)
        batches.cancel(batch)
        batch.refresh_from_db()
        return Response(batches.batch_json(batch))
