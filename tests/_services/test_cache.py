import sqlite3
import threading
import warnings

import pytest

from ragmeter.judge import Message, NullCache, SQLiteCache, cache_key

BASE = {
    "identity": "http://x/v1|model-a",
    "params": {"temperature": 0.0, "seed": 42},
    "prompt_version": "faithfulness/verify@1",
    "messages": [Message("user", "Is it true?")],
    "schema": {"title": "Verdict"},
}


@pytest.mark.parametrize(
    "change",
    [
        {"identity": "http://x/v1|model-b"},
        {"identity": "http://y/v1|model-a"},
        {"params": {"temperature": 0.7, "seed": 42}},
        {"params": {"temperature": 0.0, "seed": 1}},
        {"prompt_version": "faithfulness/verify@2"},
        {"messages": [Message("user", "Is it false?")]},
        {"messages": [Message("system", "Is it true?")]},
        {"schema": {"title": "Other"}},
        {"salt": "repeat-1"},
    ],
)
def test_everything_that_changes_an_answer_changes_the_key(change):
    assert cache_key(**BASE) != cache_key(**{**BASE, **change})


def test_key_is_stable():
    assert cache_key(**BASE) == cache_key(**dict(BASE))


def test_sqlite_round_trip_and_persistence(tmp_path):
    path = tmp_path / "cache.db"
    cache = SQLiteCache(path)
    cache.put("k", {"output": {"verdict": 1}, "probabilities": [0.9]})
    cache.close()
    assert SQLiteCache(path).get("k") == {"output": {"verdict": 1}, "probabilities": [0.9]}
    assert SQLiteCache(path).get("missing") is None


def test_refresh_ignores_stored_answers_but_stores_new_ones(tmp_path):
    path = tmp_path / "cache.db"
    SQLiteCache(path).put("k", {"v": 1})
    refreshing = SQLiteCache(path, refresh=True)
    assert refreshing.get("k") is None
    refreshing.put("k", {"v": 2})
    assert SQLiteCache(path).get("k") == {"v": 2}


def test_corrupt_file_degrades_to_no_cache_with_a_warning(tmp_path):
    path = tmp_path / "cache.db"
    path.write_bytes(b"this is not a sqlite database" * 100)
    with pytest.warns(RuntimeWarning, match="continuing without a cache"):
        cache = SQLiteCache(path)
        cache.put("k", {"v": 1})
        assert cache.get("k") is None


def test_locked_database_degrades_instead_of_crashing(tmp_path):
    path = tmp_path / "cache.db"
    SQLiteCache(path).close()
    locker = sqlite3.connect(path, timeout=0)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.warns(RuntimeWarning, match="continuing without a cache"):
            cache = SQLiteCache(path, timeout_s=0.05)
            cache.put("k", {"v": 1})
        assert cache.get("k") is None
    finally:
        locker.rollback()
        locker.close()


@pytest.mark.parametrize("trial", range(5))
def test_concurrent_writers_lose_nothing(tmp_path, trial):
    # Eight connections opening one new file at once: switching it to WAL takes a lock that
    # SQLite's busy timeout does not wait for (before the retry, 4 trials in 40 lost a writer).
    path = tmp_path / "cache.db"

    def write(start):
        cache = SQLiteCache(path)
        for i in range(start, start + 50):
            cache.put(f"k{i}", {"i": i})

    threads = [threading.Thread(target=write, args=(n * 50,)) for n in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # degrading to no cache would be a lost writer
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    cache = SQLiteCache(path)
    assert all(cache.get(f"k{i}") == {"i": i} for i in range(400))


def test_null_cache_never_hits():
    cache = NullCache()
    cache.put("k", {"v": 1})
    assert cache.get("k") is None
