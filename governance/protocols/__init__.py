"""The wire protocols clients speak to Gavel, each a thin translation in and out of one completions run (SPEC §11.5–§11.8)."""
