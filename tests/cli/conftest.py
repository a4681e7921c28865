from tests.store.conftest import postgres_server, store_url  # noqa: F401 - fixtures
