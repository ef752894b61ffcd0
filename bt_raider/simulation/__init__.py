"""Simulated worlds for unit-testing trees: ``SimWorld`` (one robot in an AI2-THOR scene) and
the multi-robot household of the cooperative demo (its rooms and doors in
:mod:`~bt_raider.simulation.house`, what may be in it in :mod:`~bt_raider.simulation.catalogue`,
what a robot sees in :mod:`~bt_raider.simulation.observation`).
"""
