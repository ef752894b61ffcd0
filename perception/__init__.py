"""Perception: the scene model and its files, RAIDER tool sets, spatial relations, lexicon.

Ground floor: imports nothing of bt_raider but :mod:`bt_raider.errors`.
"""
