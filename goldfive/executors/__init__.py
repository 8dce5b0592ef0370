"""Executors drive a plan task by task."""

from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor

__all__ = ["ParallelDAGExecutor", "SequentialExecutor"]
