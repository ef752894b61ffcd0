"""The parts of the two case builders, ``build_cases.py`` and ``heldout_build.py``.

``patch`` is the patch format both share (and the benchmarks replay); ``kitchen``, ``book``
and one module per issue category write the case set; the ``heldout_*`` modules write the
held-out set and check each of its labels with an independent oracle.
"""
