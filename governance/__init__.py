"""Gavel: a governance layer for text written by language models."""
