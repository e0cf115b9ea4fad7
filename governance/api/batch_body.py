"""A batch body is bounded before it is parsed (issue 25): POST batches may carry GAVEL_MAX_BATCH_BYTES
(64 MiB by default), and 64 MiB of empty items would become tens of millions of Python objects before the
10,000-item check. One pass over the bytes counts the JSON values (strings skipped whole) and stops at the
bound; only a body under it is parsed."""
import io
import re

from django.utils.translation import gettext as _

from governance.api.parsers import BodyParser
from governance.errors import BadInput

# 10,000 items of up to 100 JSON values each (an item, its messages, their parts, the field facts).
MAX_BATCH_VALUES = 1_000_000
# A string (skipped whole, escapes included), a container's opening, or a scalar.
_VALUE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]|-?[0-9][0-9.eE+\-]*|true|false|null')


def too_many_values(raw: bytes, limit: int = MAX_BATCH_VALUES) -> bool:
    """Whether `raw` holds more than `limit` JSON values; stops reading at the first one past it."""
    for count, _match in enumerate(_VALUE.finditer(raw), start=1):
        if count > limit:
            return True
    return False


class BatchBodyParser(BodyParser):
    """JSON, counted before it is parsed: past MAX_BATCH_VALUES values is a 400 naming `items`."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream else b""
        if too_many_values(raw):
            raise BadInput(
                _("The batch holds more than %(limit)d JSON values; nothing was queued.") % {"limit": MAX_BATCH_VALUES},
                fields={"items": [_("Send at most 10,000 items of ordinary size; split a larger batch.")]})
        return super().parse(io.BytesIO(raw), media_type, parser_context)  # malformed JSON: the usual 400
