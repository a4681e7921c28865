"""Diagnosis: metrics read in pairs say where a RAG system fails and what to try."""

from ragmeter.diagnosis._finding import Finding
from ragmeter.diagnosis._rules import Condition, Rule, diagnose, load_rules

__all__ = ["Condition", "Finding", "Rule", "diagnose", "load_rules"]
