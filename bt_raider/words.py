"""English word forms shared by perception and the CDR memory: singulars and plurals.

A leaf module (standard library only), so both ground-floor packages may import it.
:func:`singular` is the memory's best single guess for a word; :func:`singulars` lists the
candidate forms of a phrase for perception to look up in its lexicon, most likely first.
"""

from __future__ import annotations

import re


def singular(word: str) -> str:
    """A plain English singular (``boxes`` -> ``box``, ``knives`` -> ``knife``)."""
    w = word
    if len(w) <= 3 or w.endswith(("ss", "us", "is", "ous")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ves") and w not in {"gloves", "stoves", "sleeves", "olives", "curves"}:
        return w[:-3] + ("fe" if w[:-3].endswith(("kni", "wi", "li")) else "f")
    if w.endswith(("sses", "xes", "ches", "shes", "zes", "oes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("'s"):
        return w[:-1]
    return w


def singulars(phrase: str) -> list[str]:
    """Candidate singular forms of a phrase's last word, most likely first ("knives" -> "knife")."""
    head, _, last = phrase.rpartition(" ")
    prefix = f"{head} " if head else ""
    out: list[str] = []
    rules = (
        ("ies", "y"),
        ("ves", "fe"),
        ("ves", "f"),
        ("oes", "o"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("sses", "ss"),
        ("xes", "x"),
        ("zes", "z"),
        ("ses", "s"),
        ("s", ""),
    )
    for suffix, repl in rules:
        if last.endswith(suffix) and len(last) > len(suffix) + 1 and not last.endswith("ss"):
            form = prefix + last[: -len(suffix)] + repl
            if form not in out:
                out.append(form)
    return out


def plural(phrase: str) -> str:
    """A regular English plural of a phrase's last word ("knife" -> "knives")."""
    head, _, last = phrase.rpartition(" ")
    prefix = f"{head} " if head else ""
    if re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif last.endswith("fe"):
        last = last[:-2] + "ves"
    elif re.search(r"(s|x|z|ch|sh)$", last) or re.search(r"[^aeiou]o$", last):
        last += "es"
    else:
        last += "s"
    return prefix + last
