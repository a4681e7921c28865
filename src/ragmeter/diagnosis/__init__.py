"""Diagnosis: metrics read in pairs say where a RAG system fails and what to try."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.diagnosis._finding import Figure as Figure
    from ragmeter.diagnosis._finding import Finding as Finding
    from ragmeter.diagnosis._rules import Condition as Condition
    from ragmeter.diagnosis._rules import Rule as Rule
    from ragmeter.diagnosis._rules import diagnose as diagnose
    from ragmeter.diagnosis._rules import load_rules as load_rules

_lazy.attach(__name__, __file__)
