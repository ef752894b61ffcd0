"""RobotActions: which actions a recovery may use, under the robot's own names."""

from __future__ import annotations

import pytest

from bt_raider.errors import RecoveryCodeError
from bt_raider.recovery.robot_actions import ROBOT_VERBS, RobotActions, verb_for_name
from bt_raider.recovery.safecode import parse_recovery
from tests.bt_raider.recovery.toy import ToyRobot


def test_an_explicit_mapping_offers_only_those_verbs_under_the_robots_names() -> None:
    actions = RobotActions({"move_to": "navigate", "pick": "grasp", "place": "put"})
    assert actions.names == ("navigate", "grasp", "put")
    assert actions.name_for("move_to") == "navigate" and actions.verb_of("put") == "place"
    assert actions.has("pick") and not actions.has("open") and actions.name_for("open") is None
    assert "navigate" in actions and "move_to" not in actions
    assert actions.usage() == [
        'ask("question")',
        'say("statement")',
        'wait_for("event") or wait_for(seconds)',
        "navigate(location)",
        "grasp(object)",
        "put(object) or put(object, destination)",
    ]
    vocab = actions.vocabulary()
    assert vocab.arities("put") == (1, 2) and "move_to" not in vocab and "ask" in vocab
    # The whitelist built from it refuses RAIDER's name for an action the robot calls otherwise.
    with pytest.raises(RecoveryCodeError, match="unknown action 'move_to'.*navigate"):
        parse_recovery("move_to('CounterTop')", vocab)
    assert actions.missing("move_to") == (
        "the robot has no action 'move_to' (the robot calls move_to 'navigate'); its actions "
        "are navigate(1), grasp(1), put(1-2), besides ask, say and wait_for"
    )


def test_from_names_matches_synonyms_and_keeps_the_robots_own_actions() -> None:
    actions = RobotActions.from_names(["navigate", "grasp", "put", "wipe-table"], arities={})
    assert actions.name_for("move_to") == "navigate"
    assert actions.name_for("pick") == "grasp" and actions.name_for("place") == "put"
    assert "wipe_table" in actions and actions.verb_of("wipe_table") == "wipe_table"
    assert actions.vocabulary().arities("wipe_table") == (1, 2)
    # An explicit pair wins over the matching.
    moved = RobotActions.from_names(["go", "drive"], mapping={"move_to": "drive"})
    assert moved.name_for("move_to") == "drive" and "go" in moved
    assert verb_for_name("Pick-Up") == "pick" and verb_for_name("dance") is None


def test_from_robot_reads_the_methods_that_mean_a_verb() -> None:
    actions = RobotActions.from_robot(ToyRobot())
    assert sorted(actions.names) == ["grasp", "navigate", "put"]


def test_coerce_accepts_the_documented_forms() -> None:
    assert RobotActions.coerce(None) is None
    same = RobotActions.raider()
    assert RobotActions.coerce(same) is same
    assert set(same.names) == set(ROBOT_VERBS)
    assert RobotActions.coerce({"pick": "grasp"}).names == ("grasp",)  # type: ignore[union-attr]
    assert RobotActions.coerce(["navigate"]).name_for("move_to") == "navigate"  # type: ignore[union-attr]

    class Registry:
        def names(self) -> list[str]:
            return ["grasp"]

    assert RobotActions.coerce(Registry()).name_for("pick") == "grasp"  # type: ignore[union-attr]
    with pytest.raises(TypeError, match="mapping verb"):
        RobotActions.coerce(42)


def test_bad_mappings_are_refused_with_the_reason() -> None:
    with pytest.raises(RecoveryCodeError, match="'teleport' is not one of RAIDER's verbs"):
        RobotActions({"teleport": "beam"})
    assert "beam" in RobotActions({"teleport": "beam"}, arities={"beam": 1})
    with pytest.raises(RecoveryCodeError, match="given for both 'pick' and 'place'"):
        RobotActions({"pick": "handle", "place": "handle"})
    with pytest.raises(RecoveryCodeError, match="interaction action"):
        RobotActions({"say": "say"}, arities={"say": 1})
    with pytest.raises(RecoveryCodeError, match="not a Python identifier"):
        RobotActions({"pick": "grab it"})
