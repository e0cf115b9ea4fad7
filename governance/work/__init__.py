"""Queued work of SPEC §10 and §10.1: the queue, Celery task bodies, batches and callbacks."""
