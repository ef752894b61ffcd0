"""REVECA: cooperation between robots that share a goal.

Observed information and collaborator memory, relevance of information, relative proximity,
trajectory-based validation of a shared sub-goal (ask a collaborator only when it probably did
it already), and the messages robots exchange.
"""
