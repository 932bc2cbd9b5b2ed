"""Hindsight graph builders: an LLM builder and a deterministic offline builder (WorldReasoner, Appendix B.2)."""
