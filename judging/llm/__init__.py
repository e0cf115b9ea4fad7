"""The one door to language models: litellm, imported lazily, behind plain data; no Django."""

from judging.llm.calls import DEMO_ROUTE, check_parameters, complete, decide, demo_answer
from judging.llm.errors import ProviderError, UnsupportedParameters, classify_error
from judging.llm.loader import preload
from judging.llm.streams import StreamHandle, WholeAnswer, stream, whole_answer
from judging.llm.targets import DecisionReply, ModelReply, ModelTarget, model_string
from judging.llm.usage import count_tokens, token_count

__all__ = [
    "DEMO_ROUTE",
    "DecisionReply",
    "ModelReply",
    "ModelTarget",
    "ProviderError",
    "StreamHandle",
    "UnsupportedParameters",
    "WholeAnswer",
    "check_parameters",
    "classify_error",
    "complete",
    "count_tokens",
    "decide",
    "demo_answer",
    "model_string",
    "preload",
    "stream",
    "token_count",
    "whole_answer",
]
