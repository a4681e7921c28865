"""Test sets from real questions: pick a diverse, representative, hard set of production
samples to label, and merge the labelled ones into the golden set."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.mining._labels import LABEL_COLUMNS as LABEL_COLUMNS
    from ragmeter.mining._merge import MergeConflict as MergeConflict
    from ragmeter.mining._merge import MergeResult as MergeResult
    from ragmeter.mining._merge import is_labelled as is_labelled
    from ragmeter.mining._merge import merge_labelled as merge_labelled
    from ragmeter.mining._mine import DEFAULT_NOVEL_SHARE as DEFAULT_NOVEL_SHARE
    from ragmeter.mining._mine import DEFAULT_WORST_SHARE as DEFAULT_WORST_SHARE
    from ragmeter.mining._mine import MiningResult as MiningResult
    from ragmeter.mining._mine import Pick as Pick
    from ragmeter.mining._mine import describe as describe
    from ragmeter.mining._mine import mine as mine
    from ragmeter.mining._scores import Standing as Standing
    from ragmeter.mining._scores import standings as standings

_lazy.attach(__name__, __file__)
