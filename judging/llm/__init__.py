"""The one door to language models (litellm, imported lazily): calls, streams, errors, usage and cost."""
from judging.llm.calls import *  # noqa: F401,F403
from judging.llm.calls import DEMO_ROUTE, UnsupportedParameters, check_parameters, preload  # noqa: F401
from judging.llm.calls import _client_timeout, _litellm  # noqa: F401  (split next)
