"""Recovery: an issue's explanation -> Python-like code -> a py_trees subtree, never executed.

The recovery planners (symbolic templates or an LLM with few-shot examples) answer a recovery
request with code such as ``item = ask("which cup?"); pick(item)``; the safe-code parser reads it
with :mod:`ast` against a whitelist and the compiler turns it into behaviours.
"""
