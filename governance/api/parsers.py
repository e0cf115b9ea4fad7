"""The API's request parser. Kept apart from the views: DRF imports it from settings while
rest_framework.views itself is still loading."""
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BodyParser(JSONParser):
    """JSON bodies; one nested deeper than Python's recursion limit is malformed input, not a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(_("nested too deeply")) from exc
