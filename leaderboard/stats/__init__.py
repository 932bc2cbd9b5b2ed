"""The standings' maths: pure NumPy/SciPy over grade tables, no Django, tested without a database.

``views`` (what a leaderboard view selects), ``tables`` (grade records as columns), ``metrics``
(what a row carries), ``columns`` (one view's rows), ``bootstrap`` (the Brier interval), ``ranking``,
``baselines``, and the fair-comparison scores ``fixed_effects``, ``peer``, ``time_average`` and
``pairwise``. The selectors load the tables and the services write what these modules compute.
"""
