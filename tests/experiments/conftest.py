"""The store-backed experiment tests run on every backend the store tests use."""

from tests.store.conftest import postgres_server, store_url  # noqa: F401
