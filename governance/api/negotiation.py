"""Content negotiation: Gavel answers JSON (or Server-Sent Events for a stream) whatever `Accept` says.

SSE client libraries send `Accept: text/event-stream` on the request that opens a
stream; a refusal (406) would lock every one of them out (SPEC §8.1). The body
shape is fixed by the endpoint, so an `Accept` no renderer offers changes nothing.
"""
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class AnyAccept(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            renderer = renderers[0]
            return renderer, renderer.media_type
