"""The OpenAI-compatible gateway (SPEC §11.5): `/openai/v1/models` and `/openai/v1/chat/completions`.

A thin translation over governance/runs/completions.py — the same run as POST /api/v1/completions,
spoken in the OpenAI Chat Completions protocol, with the governance result in a `gavel` member.
"""
