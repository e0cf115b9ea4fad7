"""Gavel's PostgreSQL backend (`ENGINE = "governance.postgresql"`): Django's, with a health check
that asks the socket before it asks the server."""
