"""The paper's LLM extractor: a chat model decomposes a sentence into ``(operation, object)``.

Ma et al. (section 4.2) use GPT-4o "as an extractor and comparator": it extracts the actions of
the query and of each context, and the rules compare them. The prompt (``bt_raider/llm/templates/cdr_extract.j2``,
rendered with ``StrictUndefined``) opens with the paper's judgement rules (Table 4) and asks
for the actions as JSON, in the operation vocabulary of the symbolic lexicon, so LLM-extracted
and symbolically extracted records compare with each other: the model's actions are put in the
symbolic frame (:meth:`bt_raider.memory.frames.FrameReader.normalise`: device classes,
attributes, places) and judged by the same rules.

The chat model is duck-typed -- anything with ``complete(messages) -> reply`` where
``reply.content`` is the text (:class:`bt_raider.llm.chat.ChatModel` fits) -- because the memory
may not import the core. The model's reply is never executed: it is parsed as JSON and
validated. A reply that cannot be used is fed back to the model once with the reason; if it is
still unusable the symbolic extractor answers (``fallback``), or :class:`BackendError` is
raised when there is none.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from bt_raider.errors import BackendError
from bt_raider.llm import prompts
from bt_raider.llm.replies import json_in_reply
from bt_raider.memory.actions import Action, Extractor
from bt_raider.memory.extract import SymbolicExtractor, tokenize
from bt_raider.memory.frames import FrameReader
from bt_raider.memory.verbs import VerbLexicon

TEMPLATE = "cdr_extract.j2"

#: A few worked examples shown to the model (the paper's hall light and Table 4's radio).
EXAMPLES = [
    {
        "sentence": "Can you turn off the hall light?",
        "answer": '{"actions": [{"operation": "turn_off", "object": "light", "location": null, '
        '"negated": false}]}',
    },
    {
        "sentence": "He turned on the radio.",
        "answer": '{"actions": [{"operation": "turn_on", "object": "radio", "location": null, '
        '"negated": false}]}',
    },
    {
        "sentence": "turn the kitchen lights down a bit",
        "answer": '{"actions": [{"operation": "decrease", "object": "light", "location": null, '
        '"negated": false, "place": "kitchen", "attribute": "brightness", "degree": "a bit"}]}',
    },
    {
        "sentence": "pick up the mug and don't put it in the sink",
        "answer": '{"actions": [{"operation": "take", "object": "mug", "location": null, '
        '"negated": false}, {"operation": "put", "object": "mug", "location": "sink", '
        '"negated": true}]}',
    },
]


def render(template: str = TEMPLATE, **variables: Any) -> str:
    """Render the extraction prompt (``bt_raider/llm/templates/cdr_extract.j2``) strictly."""
    return prompts.render(template, **variables)


class LLMExtractor:
    """Action extraction by a chat model, with the paper's prompt.

    Args:
        chat: anything with ``complete(messages) -> reply`` (``reply.content`` is text).
        fallback: extractor used when the model's reply stays unusable; None to raise
            :class:`BackendError` instead.
        lexicon: vocabulary for operations and object canonicalisation (shipped one if None).
        retries: times an unusable reply is fed back to the model with the reason.
        cache_size: sentences whose extraction is remembered (queries repeat).
    """

    name = "llm"

    def __init__(
        self,
        chat: Any,
        *,
        fallback: Extractor | None = None,
        lexicon: VerbLexicon | None = None,
        retries: int = 1,
        cache_size: int = 4096,
    ) -> None:
        if not callable(getattr(chat, "complete", None)):
            raise BackendError(
                f"chat model {chat!r} has no complete(messages) method: expected a ChatModel "
                "such as bt_raider.llm.chat.OpenAIChat"
            )
        self.chat = chat
        self.lexicon = lexicon or VerbLexicon.load()
        self.fallback = fallback
        # The symbolic extractor's frame: device classes, attributes, places.
        self.frames = FrameReader(None, self.lexicon)
        self.retries = int(retries)
        self.operations = sorted(
            {e["op"] for e in self.lexicon.verbs.values() if e.get("op")}
            | {op for e in self.lexicon.verbs.values() for op in e.get("particles", {}).values()}
            | set(self.lexicon.phrases.values())
            | {"other"}
        )
        self._cache: OrderedDict[str, list[Action]] = OrderedDict()
        self._cache_size = int(cache_size)
        self._lock = threading.Lock()
        self.calls = 0

    @classmethod
    def with_symbolic_fallback(cls, chat: Any, **kwargs: Any) -> LLMExtractor:
        return cls(chat, fallback=SymbolicExtractor(kwargs.pop("lexicon", None)), **kwargs)

    def prompt(self, sentence: str) -> str:
        return render(TEMPLATE, sentence=sentence, operations=self.operations, examples=EXAMPLES)

    def extract(self, sentence: str) -> list[Action]:
        """The actions of ``sentence`` according to the model."""
        with self._lock:
            if sentence in self._cache:
                self._cache.move_to_end(sentence)
                return list(self._cache[sentence])
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.prompt(sentence)}]
        problem = ""
        for _attempt in range(self.retries + 1):
            self.calls += 1
            reply = self.chat.complete(messages)
            text = str(getattr(reply, "content", reply) or "")
            try:
                actions = self.parse(text)
            except ValueError as exc:
                problem = str(exc)
                # Model-caused error: tell the model what was wrong and let it try again.
                messages += [
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"That answer cannot be used: {problem}. Answer again with "
                        'JSON only: {"actions": [...]}',
                    },
                ]
                continue
            with self._lock:
                self._cache[sentence] = actions
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            return list(actions)
        if self.fallback is not None:
            return self.fallback.extract(sentence)
        raise BackendError(
            f"the chat model gave no usable action list for {sentence!r} after "
            f"{self.retries + 1} tries: {problem}"
        )

    def parse(self, text: str) -> list[Action]:
        """Validate a model reply into actions (raises ValueError with the reason)."""
        data = json_in_reply(text)
        items = data.get("actions") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ValueError('expected {"actions": [...]} with a list')
        out = []
        for n, item in enumerate(items):
            if not isinstance(item, dict):
                raise ValueError(f"action {n + 1} is not an object")
            op = str(item.get("operation", "")).strip().lower().replace(" ", "_")
            if op not in self.operations:
                raise ValueError(
                    f"action {n + 1}: unknown operation {op!r}; expected one of "
                    f"{', '.join(self.operations)}"
                )
            negated = item.get("negated", False)
            if not isinstance(negated, bool):
                raise ValueError(f"action {n + 1}: negated must be true or false")
            obj = self._noun(item.get("object"))
            slots: dict[str, str | None] = {}
            for key in ("place", "attribute", "degree"):
                value = item.get(key)
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"action {n + 1}: {key} must be a string or null")
                words = [t for t in tokenize(value or "") if t.isalnum()]
                slots[key] = " ".join(words) if words and words[0] not in {"null", "none"} else None
            action = Action(
                operation=op,
                object=obj,
                location=self._noun(item.get("location")),
                negated=negated,
                lu=op.replace("_", " "),
                head=tokenize(str(item["object"]))[-1] if obj else None,
                place=slots["place"],
                attribute=slots["attribute"],
                degree=slots["degree"],
            )
            out.append(self.frames.normalise(action))
        return out

    def _noun(self, value: Any) -> str | None:
        """The model's noun phrase in the lexicon's canonical vocabulary."""
        if value is None:
            return None
        tokens = [t for t in tokenize(str(value)) if t.isalnum()]
        if not tokens or tokens[0] in {"null", "none"}:
            return None
        return self.lexicon.canonical(tokens)
