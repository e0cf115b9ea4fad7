"""`manage.py create_database`: create the PostgreSQL database DATABASE_URL names, when it does not exist yet.

The README's Production section runs it before `migrate` (which needs the database to exist). Run again,
it says the database exists and changes nothing. On SQLite there is nothing to do: `migrate` makes the file.
"""
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection


class Command(BaseCommand):
    help = "Create the PostgreSQL database DATABASE_URL names, if it does not exist (safe to run again)."

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if connection.vendor != "postgresql":
            self.stdout.write(f"{connection.vendor}: nothing to create ({name} is made by migrate).")
            return
        try:
            # The backend's own connection to the maintenance database "postgres" (what Django's test
            # runner uses to create the test database), with DATABASE_URL's host, port and user.
            with connection._nodb_cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
                if cursor.fetchone():
                    self.stdout.write(f"Database {name} exists already.")
                    return
                cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
        except DatabaseError as exc:
            raise CommandError(f"Could not create database {name}: {exc}".strip()) from exc
        self.stdout.write(f"Created database {name}.")
