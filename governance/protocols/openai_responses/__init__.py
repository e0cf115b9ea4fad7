"""The OpenAI Responses API (SPEC §11.6): `POST /openai/v1/responses`, a thin translation over the completions run."""
