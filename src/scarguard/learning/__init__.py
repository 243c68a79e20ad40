"""Learning: what a failure teaches, what evidence lifts, what a call runs into.

- :mod:`~scarguard.learning.keys`: the counter and constraint key grammar;
- :mod:`~scarguard.learning.rules`: the learning ladder (what a failure teaches);
- :mod:`~scarguard.learning.lifting`: what a success disproves;
- :mod:`~scarguard.learning.index`: active constraints indexed for matching;
- :mod:`~scarguard.learning.convergence`: whether the agent makes progress;
- :mod:`~scarguard.learning.messages`: what a decision tells the LLM.
"""
