"""Hindsight graph builders: an LLM builder and a deterministic offline builder (worldreasoner.md B.2)."""
