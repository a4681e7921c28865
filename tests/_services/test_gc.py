"""Fewer garbage collections inside a bulk read or write, and everything put back after."""

from __future__ import annotations

import gc

import pytest

from ragmeter._services._gc import (  # private: bulk GC settings, no public home
    BULK_GC_THRESHOLD,
    fewer_collections,
)


def test_settings_are_put_back_after_nesting_and_errors():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold()[0] == BULK_GC_THRESHOLD and gc.get_freeze_count() > 0
        frozen = gc.get_freeze_count()
        with fewer_collections():  # inner: leaves the outer one's settings alone
            assert gc.get_freeze_count() == frozen
        assert gc.get_threshold()[0] == BULK_GC_THRESHOLD
        raise RuntimeError("the work failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_made_inside_are_still_collected():
    class Node:
        pass

    with fewer_collections():
        node = Node()
        node.self = node  # a cycle, garbage once the name is gone
        del node
        assert gc.collect() >= 1


def test_with_collections_off_nothing_is_changed():
    gc.disable()
    try:
        before = gc.get_threshold()
        with fewer_collections():
            assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        gc.enable()
