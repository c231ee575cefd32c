"""The system under test: the protocol any memory system implements, and the reference store
adapted to it."""

from evalkit.systems.protocol import MemorySystem, ScenarioMemory
from evalkit.systems.reference import ReferenceSystem
from evalkit.systems.replay import ReplaySystem

__all__ = ["MemorySystem", "ReferenceSystem", "ReplaySystem", "ScenarioMemory"]
