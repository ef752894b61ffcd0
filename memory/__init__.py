"""CDR-cleaned vector memory: embeddings, hnswlib index, conflict detection rules.

Ground floor: imports nothing of bt_raider but :mod:`bt_raider.errors`.
"""
