"""The editors' surface (SPEC §10): the review queue, a task's page with its actions, the dashboard.

Views are thin: they read the request, call `governance.work.queue` for every write, and render
`templates/review/`. The dashboard's numbers come from `dashboard.py`, which reads facts only.
"""
