"""The pipeline of SPEC §3–§9 on a finished text: the pipeline, its core steps, text normalisation, secret redaction, event text."""
