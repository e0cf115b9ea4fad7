"""`manage.py create_database`: create the PostgreSQL database DATABASE_URL names, in UTF-8, when it does
not exist yet.

The README's Production section runs it before `migrate` (which needs the database to exist). The
database is always made with `ENCODING 'UTF8'` from `template0` (the only template a new encoding may be
copied from): a cluster made without a UTF-8 locale would otherwise give SQL_ASCII, where the first
non-ASCII text fails. Its LC_COLLATE/LC_CTYPE are the cluster's when they are UTF-8 already, else C.UTF-8,
else C (which allows every encoding; only the order of non-ASCII letters in sorted lists differs). Run
again, it says the database exists and changes nothing — or refuses, naming why, when an existing
database is not UTF-8. On SQLite there is nothing to do: `migrate` makes the file.
"""
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection

# Locales tried, in order, when the cluster's own is not UTF-8 (C works with every encoding).
FALLBACK_LOCALES = ("C.UTF-8", "C")


def _is_utf8(locale: str) -> bool:
    return locale.replace("-", "").lower().endswith(".utf8")


class Command(BaseCommand):
    help = "Create the PostgreSQL database DATABASE_URL names, in UTF-8, if it does not exist (safe to run again)."

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if connection.vendor != "postgresql":
            self.stdout.write(f"{connection.vendor}: nothing to create ({name} is made by migrate).")
            return
        try:
            # The backend's own connection to the maintenance database "postgres" (what Django's test
            # runner uses to create the test database), with DATABASE_URL's host, port and user.
            with connection._nodb_cursor() as cursor:
                cursor.execute("SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = %s", [name])
                row = cursor.fetchone()
                if row:
                    if row[0] != "UTF8":
                        raise CommandError(
                            f"Database {name} exists with encoding {row[0]}; Gavel stores every text as UTF-8 and "
                            f"needs ENCODING 'UTF8'. If it is empty, drop it (DROP DATABASE) and run create_database "
                            "again; else dump it and restore it into a UTF-8 database.")
                    self.stdout.write(f"Database {name} exists already.")
                    return
                locale = self._create(cursor, connection.ops.quote_name(name))
        except DatabaseError as exc:
            raise CommandError(f"Could not create database {name}: {exc}".strip()) from exc
        self.stdout.write(f"Created database {name} (UTF8, locale {locale}).")

    def _create(self, cursor, quoted: str) -> str:
        cursor.execute("SELECT datcollate, datctype FROM pg_database WHERE datname = 'template1'")
        collate, ctype = cursor.fetchone()
        candidates = [collate] if _is_utf8(collate) and _is_utf8(ctype) else list(FALLBACK_LOCALES)
        refused = []
        for locale in candidates:
            try:
                # CREATE DATABASE takes no parameters: the locale is one of ours or the cluster's own name.
                literal = "'" + locale.replace("'", "''") + "'"
                cursor.execute(f"CREATE DATABASE {quoted} ENCODING 'UTF8' TEMPLATE template0 "
                               f"LC_COLLATE {literal} LC_CTYPE {literal}")
                return locale
            except DatabaseError as exc:  # the locale is not installed on the server: try the next
                refused.append(f"{locale}: {str(exc).strip()}")
        raise CommandError("PostgreSQL refused every UTF-8-capable locale for the new database (" +
                           "; ".join(refused) + "). Install the C.UTF-8 locale on the database server.")
