"""The API's request parser. Kept apart from the views: DRF imports it from settings while
rest_framework.views itself is still loading."""
import io

from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from governance.errors import BadInput
from governance.screening.text import nesting_beyond

# How deep a request body may nest, read from its bytes before it is parsed (issue 41): far beyond any
# request of the API or the protocols (a policy document is refused past 64 levels, tool arguments past
# 100, after parsing), and far below the depth at which parsing would exhaust Python's stack.
MAX_BODY_DEPTH = 512
BODY_TOO_DEEP = format_lazy(gettext_lazy("The JSON is nested more than {} levels deep."), MAX_BODY_DEPTH)


class BodyParser(JSONParser):
    """JSON bodies, their nesting bounded before they are parsed: deeper is a 400 naming the member."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream else b""
        member = nesting_beyond(raw, MAX_BODY_DEPTH)
        if member is not None:
            raise BadInput(_("The request body is nested too deeply."), code="malformed",
                           fields={member or "body": [str(BODY_TOO_DEEP)]})
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError as exc:  # a stack already deep when the body arrived
            raise ParseError(_("nested too deeply")) from exc
