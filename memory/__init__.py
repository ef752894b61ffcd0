"""CDR-cleaned vector memory: embeddings, hnswlib index, conflict detection rules.

Ground floor: imports nothing of bt_raider but :mod:`bt_raider.errors` and the leaf
:mod:`bt_raider.llm` (prompt rendering, reply parsing). Importing this package loads no model
(torch is imported on the first embedding).

Main entry point: :class:`VectorMemory` (``record``, ``examples``, ``calibrate``, ``trim``).
"""

from bt_raider.memory.actions import Action, Extractor
from bt_raider.memory.calibrate import Calibration, calibrate_theta
from bt_raider.memory.embedder import (
    Embedder,
    OpenAIEmbedder,
    TransformersEmbedder,
    make_embedder,
)
from bt_raider.memory.extract import SymbolicExtractor
from bt_raider.memory.llm import LLMExtractor
from bt_raider.memory.records import Context, Example, Record, Resolution
from bt_raider.memory.rules import Judgement, Rule, RuleSet
from bt_raider.memory.vector import DEFAULT_THETA, VectorMemory

__all__ = [
    "DEFAULT_THETA",
    "Action",
    "Calibration",
    "Context",
    "Embedder",
    "Example",
    "Extractor",
    "Judgement",
    "LLMExtractor",
    "OpenAIEmbedder",
    "Record",
    "Resolution",
    "Rule",
    "RuleSet",
    "SymbolicExtractor",
    "TransformersEmbedder",
    "VectorMemory",
    "calibrate_theta",
    "make_embedder",
]
