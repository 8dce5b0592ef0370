"""Durable runs: continue a run from its recording after its process stopped."""
