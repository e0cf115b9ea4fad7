"""Celery tasks of the core: thin — they take plain arguments and call one service."""
from governance.celery import app


@app.task(name="governance.purge_governance", acks_late=True)
def purge_governance_task(days: int = 30) -> int:
    """Purge governance events older than `days` days (schedule it with celery beat)."""
    from governance.services import purge_governance

    deleted, _ = purge_governance(days)
    return deleted
