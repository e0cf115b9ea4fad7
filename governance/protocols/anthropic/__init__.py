"""The Anthropic Messages API (SPEC §11.7): a thin translation over the completions run (governance/runs/completions.py)."""
