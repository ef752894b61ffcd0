"""Perception: the scene model, RAIDER tool sets, spatial relations, simulated worlds.

Ground floor: imports nothing of bt_raider but :mod:`bt_raider.errors`.
"""
