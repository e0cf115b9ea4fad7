"""A model run from request to answer: completions, escalation, the call service with its budgets and fallback chain, provider limits, failures and keys."""
