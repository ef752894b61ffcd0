"""Talking to language models: chat backends, prompt templates, reading replies.

- :mod:`~bt_raider.llm.chat`: the ``ChatModel`` protocol and its backends (OpenAI-compatible
  endpoints, a local transformers model, a scripted model for tests).
- :mod:`~bt_raider.llm.prompts`: the one renderer of the prompt templates in ``templates/``.
- :mod:`~bt_raider.llm.replies`: the one home for parsing what a model replied.

It imports nothing of the project but :mod:`bt_raider.errors`, so every method may use it.
"""
