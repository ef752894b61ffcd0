"""Simulated worlds for unit-testing trees: ``SimWorld`` (one robot in an AI2-THOR scene) and
the multi-robot household of the cooperative demo.
"""
