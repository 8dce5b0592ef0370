"""The store tests use the session's PostgreSQL server (``pg_server`` in tests/conftest.py)."""
