"""The LLM client shared by the question generator, the hindsight builder and the open-ended judge.

It lives in the lowest app so all three can import it (``ingestion <- grading <- leaderboard``):
``client`` (calls, stages, records), ``config`` (settings and stage limits), ``structured`` (how
JSON is asked for), ``jsontext`` (reading JSON from an answer) and ``tokens`` (prompt budgets).
"""
