"""goldfive serve's garbage-collector tuning (goldfive.remote.gc_tuning)."""

from __future__ import annotations

import gc

import pytest

from goldfive.remote.gc_tuning import SERVING_GEN0_THRESHOLD, restore, tune_for_serving


def test_tuning_freezes_what_exists_and_raises_the_young_threshold_then_restores() -> None:
    threshold = gc.get_threshold()
    frozen = gc.get_freeze_count()
    settings = tune_for_serving()
    try:
        assert gc.get_threshold() == (SERVING_GEN0_THRESHOLD, threshold[1], threshold[2])
        assert gc.get_freeze_count() > frozen  # this test's own objects, the modules, ...
        assert settings.threshold == threshold and settings.frozen == frozen
    finally:
        restore(settings)
    assert gc.get_threshold() == threshold
    if frozen == 0:
        assert gc.get_freeze_count() == 0


def test_a_threshold_below_one_is_refused_and_changes_nothing() -> None:
    threshold = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with pytest.raises(ValueError, match="gen0 threshold must be >= 1"):
        tune_for_serving(0)
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == frozen
