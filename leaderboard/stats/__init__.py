"""Statistics over grade tables for the standings: pure NumPy/SciPy, no Django, tested without a database."""
