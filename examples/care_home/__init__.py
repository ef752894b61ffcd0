"""A care home's robot, in its own words (issue 34): the example of ``docs/domain.md``.

Its actions are the home's (``NavigateTo``, ``PickUp``, ``PutDown``, ``HandTo``, ``OpenDoor``
and ``PressButton``, a kind of its own), its PDDL domain puts ``navigate-to``'s destination
second (roles derived from the effects), its words are a lexicon file ("pill box",
"spectacles"; "glasses" is no plural of "glass"), and its lounge has residents and staff with
a policy of who may be asked what (:mod:`bt_raider.examples.care_home.home`).
"""

from bt_raider.examples.care_home.home import (
    ACTIONS,
    DOMAIN,
    KINDS,
    LEXICON,
    SCENE,
    checker,
    contracts,
    explored,
    guard,
    lexicon,
    recovery,
)

__all__ = [
    "ACTIONS",
    "DOMAIN",
    "KINDS",
    "LEXICON",
    "SCENE",
    "checker",
    "contracts",
    "explored",
    "guard",
    "lexicon",
    "recovery",
]
