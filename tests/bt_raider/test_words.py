"""English word forms: plurals and singulars, one home for perception and the memory."""

from bt_raider.perception.lexicon import split_type
from bt_raider.words import plural, singulars


def test_plural_and_singular_helpers():
    assert plural("knife") == "knives" and "knife" in singulars("knives")
    assert plural("cherry") == "cherries" and singulars("cherries")[0] == "cherry"
    assert plural("box") == "boxes" and "box" in singulars("boxes")
    assert plural("coffee machine") == "coffee machines"
    assert singulars("glass") == []
    assert split_type("TVStand") == "tv stand" and split_type("CD") == "cd"
