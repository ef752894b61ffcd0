"""Watch a tree run: a tick-by-tick trace of any py_trees tree and a web page to explore it.

- :class:`~bt_raider.viewer.recorder.TraceRecorder` (``recorder``): attach it to a
  ``BehaviourTree`` or a root behaviour; it records every node's status and feedback, the
  guards' phases, verdicts and recoveries, and the tick's events; ``write(path)`` saves it.
- ``trace.schema.json`` and :mod:`~bt_raider.viewer.trace`: the documented format, a validator,
  :func:`~bt_raider.viewer.trace.load_trace`.
- :class:`~bt_raider.viewer.server.ViewerServer` (``server``): the page on 127.0.0.1, for a
  trace file or a live run (``bt-raider view TRACE.json``, ``bt-raider demo ... --view``).
- :func:`~bt_raider.viewer.page.static_page` (``page``): the same page as one HTML file with the
  trace inside; :func:`~bt_raider.viewer.pictures.write_pictures` (``pictures``): that page
  plus py_trees' dot picture coloured by status, with the recovery subtrees.
"""
