"""RAIDER's check: before an action runs, *Ground, Ask & Answer, Issue* -> a :class:`Verdict`.

- :mod:`~bt_raider.checking.contract`: the query contract (``Query``, the ``Checker`` protocol);
  it imports no reasoner.
- :mod:`~bt_raider.checking.registry`: checkers by name (``make_checker``, ``check``,
  ``register_checker``), imported on first use.
- :mod:`~bt_raider.checking.verdict`: the verdict, its categories and tool calls.
- :mod:`~bt_raider.checking.parse`: structured, PDDL and natural-language queries -> actions.
- :mod:`~bt_raider.checking.tool_runner`: calling the perception tools, recording each call.
- :mod:`~bt_raider.checking.grounding`: action arguments -> scene objects, through the tools.
- :mod:`~bt_raider.checking.wording`: how explanations name objects, states and places.
- :mod:`~bt_raider.checking.symbolic`: the embedded offline reasoner (the default), and
  :mod:`~bt_raider.checking.action_rules`: the questions each action asks.
- :mod:`~bt_raider.checking.agent`: RAIDER's LLM agent and its program flow manager.
- :mod:`~bt_raider.checking.precond`: the Precond baseline of the paper (Table B.3).
"""
