"""The category lexicon: synonyms, categories, plurals, states, user files."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bt_raider.perception.lexicon import (
    _DETERMINERS,
    DEFAULT_PATH,
    CategoryLexicon,
    LexiconError,
    clean_phrase,
    split_type,
)

#: The AI2-THOR object types (iTHOR object-types page) the bundled lexicon must cover.
AI2THOR_TYPES = """AlarmClock AluminumFoil Apple AppleSliced ArmChair BaseballBat BasketBall Bathtub
BathtubBasin Bed Blinds Book Boots Bottle Bowl Box Bread BreadSliced ButterKnife Cabinet Candle CD
CellPhone Chair Cloth CoffeeMachine CoffeeTable CounterTop CreditCard Cup Curtains Desk DeskLamp
Desktop DiningTable DishSponge DogBed Drawer Dresser Dumbbell Egg EggCracked Faucet Floor FloorLamp
Footstool Fork Fridge GarbageBag GarbageCan HandTowel HandTowelHolder HousePlant Kettle KeyChain
Knife Ladle Laptop LaundryHamper Lettuce LettuceSliced LightSwitch Microwave Mirror Mug Newspaper
Ottoman Painting Pan PaperTowelRoll Pen Pencil PepperShaker Pillow Plate Plunger Poster Pot Potato
PotatoSliced RemoteControl RoomDecor Safe SaltShaker ScrubBrush Shelf ShelvingUnit ShowerCurtain
ShowerDoor ShowerGlass ShowerHead SideTable Sink SinkBasin SoapBar SoapBottle Sofa Spatula Spoon
SprayBottle Statue Stool StoveBurner StoveKnob TableTopDecor TeddyBear Television TennisRacket
TissueBox Toaster Toilet ToiletPaper ToiletPaperHanger Tomato TomatoSliced Towel TowelHolder TVStand
VacuumCleaner Vase Watch WateringCan Window WineBottle""".split()


@pytest.fixture(scope="module")
def lex() -> CategoryLexicon:
    return CategoryLexicon.default()


def test_default_is_cached_and_read_from_the_package_file(lex):
    assert CategoryLexicon.default() is lex
    data = json.loads(DEFAULT_PATH.read_text())
    assert set(data["categories"]) == set(lex.categories)


def test_every_ai2thor_type_has_a_category(lex):
    assert len(AI2THOR_TYPES) >= 120
    missing = [t for t in AI2THOR_TYPES if not lex.categories_of(t)]
    assert missing == []


def test_every_kitchen_type_has_a_category_and_resolves_by_name(lex, small_kitchen_dict):
    for otype in {o["objectType"] for o in small_kitchen_dict["objects"]}:
        assert lex.categories_of(otype), otype
        assert otype in lex.types_for(otype)
        assert otype in lex.types_for(split_type(otype))  # "coffee machine", "stove burner"


@pytest.mark.parametrize(
    "noun, types",
    [
        ("refrigerator", {"Fridge"}),
        ("butter knife", {"ButterKnife"}),
        ("knife", {"Knife", "ButterKnife"}),  # documented: "knife" means both
        ("Knife", {"Knife"}),  # an exact type name means only that type
        ("cup", {"Cup", "Mug"}),  # a mug is a cup; a scene's own Cup still wins in grounding
        ("spoon", {"Spoon", "Ladle"}),  # a ladle is a spoon
        ("mug", {"Mug"}),
        ("tv", {"Television"}),
        ("TV", {"Television"}),
        ("stove", {"StoveBurner"}),
        ("lamp", {"DeskLamp", "FloorLamp"}),
        ("pills", {"Medicine", "PillBottle"}),
        ("pill", {"Medicine", "PillBottle"}),
        ("medicine", {"Medicine", "PillBottle"}),
        ("medication", {"Medicine", "PillBottle"}),
        ("chair", {"Chair", "ArmChair"}),  # an armchair is a chair
        ("coffee machine", {"CoffeeMachine"}),
        ("CoffeeMachine", {"CoffeeMachine"}),
        ("the Coffee-Machine", {"CoffeeMachine"}),
        ("shaker", {"SaltShaker", "PepperShaker"}),  # head noun
        ("soap container", {"SoapBottle"}),
        ("roll", {"ToiletPaper", "PaperTowelRoll"}),
        ("vanity", {"Cabinet"}),  # the cabinet under a bathroom sink
        ("end table", {"SideTable"}),
        ("dust bin", {"GarbageCan"}),
        ("tv set", {"Television"}),
        ("television stand", {"TVStand"}),
        ("entertainment center", {"TVStand"}),
        ("nonsense widget", set()),
        ("", set()),
    ],
)
def test_types_for_synonyms_and_type_names(lex, noun, types):
    assert lex.types_for(noun) == types


@pytest.mark.parametrize(
    "noun, types",
    [
        ("apples", {"Apple"}),
        ("Apples", {"Apple"}),
        ("tomatoes", {"Tomato"}),
        ("knives", {"Knife", "ButterKnife"}),
        ("butter knives", {"ButterKnife"}),
        ("boxes", {"Box", "JuiceBox", "TissueBox"}),  # a type names the types it heads
        ("coffee machines", {"CoffeeMachine"}),
        ("potatoes", {"Potato"}),
        ("glasses", {"Cup"}),
    ],
)
def test_types_for_plurals(lex, noun, types):
    assert lex.types_for(noun) == types


def test_categories(lex):
    fruit = lex.types_for("fruit")
    assert "Apple" in fruit and "Tomato" not in fruit and "Lettuce" not in fruit
    assert lex.types_for("fruits") == fruit
    assert lex.types_for("a fruit") == fruit
    assert {"Tomato", "Lettuce", "Potato"} <= lex.types_for("vegetable")
    assert {"Fork", "Spoon", "Knife", "ButterKnife"} <= lex.types_for("cutlery")
    assert {"Plate", "Bowl", "Cup", "Mug"} <= lex.types_for("dishware")
    assert {"Toaster", "Microwave", "CoffeeMachine", "Fridge"} <= lex.types_for("appliance")
    electronics = lex.types_for("electronic device")
    assert {"Television", "Laptop", "CellPhone"} <= electronics
    assert lex.types_for("electronic devices") == electronics == lex.types_for("electronics")
    assert lex.types_for("seat") >= {"Chair", "Stool", "Sofa", "ArmChair"}
    assert "WineBottle" in lex.types_for("drink")
    assert "Apple" not in lex.types_for("drink")


def test_is_category(lex):
    for noun in ("fruit", "fruits", "electronic device", "utensil", "furniture", "medicine"):
        assert lex.is_category(noun), noun
    for noun in ("apple", "knife", "Knife", "refrigerator", "xyz", ""):
        assert not lex.is_category(noun), noun
    assert lex.category("electronic devices") == "electronics"
    assert lex.category("apple") is None


def test_categories_of(lex):
    assert lex.categories_of("Apple") >= {"fruit", "food"}
    assert "vegetable" not in lex.categories_of("Apple")
    assert lex.categories_of("apple") == lex.categories_of("Apple")
    assert "medicine" in lex.categories_of("PillBottle")
    assert lex.categories_of("Spaceship") == set()


@pytest.mark.parametrize(
    "adjective, flags",
    [
        ("clean", {"isDirty": False}),
        ("dirty", {"isDirty": True}),
        ("sliced", {"isSliced": True}),
        ("unsliced", {"isSliced": False}),
        ("whole", {"isSliced": False}),
        ("not sliced", {"isSliced": False}),
        ("open", {"isOpen": True}),
        ("opened", {"isOpen": True}),
        ("closed", {"isOpen": False}),
        ("on", {"isToggled": True}),
        ("switched on", {"isToggled": True}),
        ("Turned-Off", {"isToggled": False}),
        ("off", {"isToggled": False}),
        ("empty", {"isFilledWithLiquid": False}),
        ("filled", {"isFilledWithLiquid": True}),
        ("full", {"isFilledWithLiquid": True}),
        ("cooked", {"isCooked": True}),
        ("raw", {"isCooked": False}),
        ("uncooked", {"isCooked": False}),
        ("broken", {"isBroken": True}),
        ("intact", {"isBroken": False}),
        ("unbroken", {"isBroken": False}),
        ("not broken", {"isBroken": False}),
        ("purple", None),
    ],
)
def test_state_filter(lex, adjective, flags):
    assert lex.state_filter(adjective) == flags


def test_state_filter_returns_a_copy(lex):
    lex.state_filter("clean")["isDirty"] = True
    assert lex.state_filter("clean") == {"isDirty": False}


def test_object_nouns_longest_first_with_plurals(lex):
    nouns = lex.object_nouns()
    assert [len(n) for n in nouns] == sorted((len(n) for n in nouns), reverse=True)
    for n in ("coffee machine", "apple", "apples", "knives", "fruit", "electronic device", "tv"):
        assert n in nouns, n
    assert "something to sit ons" not in nouns  # no plurals of phrases
    assert nouns.index("butter knife") < nouns.index("knife")


# ---------------------------------------------------------------------- user files
def test_load_merges_a_users_dict_over_the_defaults(lex):
    user = CategoryLexicon.load(
        {
            "categories": {
                "snack food": ["Chips", "Cookie"],  # new category
                "fruit": {"add": ["Mango"], "remove": ["AppleSliced"]},  # edit
                "drink": ["Coke"],  # replace
            },
            "synonyms": {"crisps": ["Chips"], "knife": ["Knife"]},
            "states": {"frozen": {"isCooked": False}},
            "category_aliases": {"munchies": "snack food"},
        }
    )
    assert user.types_for("crisps") == {"Chips"}
    assert user.types_for("munchies") == {"Chips", "Cookie"} and user.is_category("munchies")
    assert "Mango" in user.types_for("fruit") and "AppleSliced" not in user.types_for("fruit")
    assert "Apple" in user.types_for("fruit")
    assert user.types_for("drink") == {"Coke"}
    assert user.types_for("knife") == {"Knife"}
    assert user.state_filter("frozen") == {"isCooked": False}
    assert user.types_for("refrigerator") == {"Fridge"}  # defaults kept
    assert "Chips" in user.object_types
    # the default is untouched
    assert lex.types_for("knife") == {"Knife", "ButterKnife"}
    assert "Mango" not in lex.types_for("fruit")


def test_load_from_a_file_and_without_base(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"categories": {"toy": ["Robot"]}, "synonyms": {"bot": ["Robot"]}}))
    merged = CategoryLexicon.load(path)
    assert merged.types_for("bot") == {"Robot"} and merged.types_for("apple") == {"Apple"}
    alone = CategoryLexicon.load(path, base=None)
    assert alone.types_for("bot") == {"Robot"}
    assert alone.types_for("refrigerator") == set()
    assert alone.source == str(path)


@pytest.mark.parametrize(
    "data, words",
    [
        ({"nouns": {}}, ["'nouns'", "categories", "synonyms"]),
        ({"categories": {"fruit": "Apple"}}, ["categories.fruit", "'Apple'"]),
        ({"states": {"hot": {"isHot": True}}}, ["states.hot", "'isHot'", "isDirty"]),
        ({"states": {"hot": {"isDirty": "yes"}}}, ["states.hot.isDirty", "'yes'"]),
        (
            {"category_aliases": {"stuff": "nothing"}},
            ["category_aliases.stuff", "'nothing'", "fruit"],
        ),
        ({"synonyms": {"x": [3]}}, ["synonyms.x", "[3]"]),
        ({"synonyms": []}, ["synonyms", "must be an object"]),
    ],
)
def test_malformed_lexicons_are_named(data, words):
    with pytest.raises(LexiconError) as err:
        CategoryLexicon.load(data)
    for w in words:
        assert w in str(err.value)


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(LexiconError, match="bad.json: not JSON"):
        CategoryLexicon.load(bad)
    with pytest.raises(LexiconError, match="cannot read"):
        CategoryLexicon.load(tmp_path / "missing.json")
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(LexiconError, match="JSON object"):
        CategoryLexicon.load(listed)


@pytest.mark.parametrize(
    "noun, types",
    [
        ("head of lettuce", {"Lettuce"}),  # a measure of B names B
        ("set of keys", {"KeyChain"}),
        ("bar of soap", {"SoapBar"}),  # the compound "soap bar"
        ("cup of coffee", {"Mug"}),  # the compound "coffee cup"
        ("the top of the counter", {"CounterTop"}),  # a part of B names B
        ("glass of water", {"Cup"}),  # else the container
        ("towel", {"Towel", "HandTowel", "Cloth"}),  # a hand towel is a towel; so is a cloth
        ("the left door of the cabinet", {"Cabinet"}),  # a part of B names B
        ("nonsense of widgets", set()),
    ],
)
def test_types_for_reads_a_of_b_and_compound_heads(lex, noun, types):
    assert lex.types_for(noun) == types


# --------------------------------------------------------------------------- cleaning phrases
def regex_clean_phrase(text: str) -> str:
    """clean_phrase as it was written with regexes: the reference the str.translate one matches."""
    text = re.sub(r"[_\-]+", " ", str(text).lower()).replace("'", "")
    words = re.sub(r"[^a-z0-9 ]+", " ", text).split()
    while len(words) > 1 and words[0] in _DETERMINERS:
        words = words[1:]
    return " ".join(words)


#: Text near what clean_phrase keeps: letters, digits, separators, articles, odd characters.
PHRASES = st.lists(
    st.sampled_from(["the", "a", "An", "apple", "Mug", "9", "_", "-", "'", " ", "\t", "!", "\n"])
    | st.text(max_size=3),
    max_size=8,
).map("".join)


@given(PHRASES | st.text())
@example("The Apples!")
@example("don't-'x")
@example("\u0130stanbul")  # lower-cases to "i" and a combining dot
@example("\u212a")  # the Kelvin sign lower-cases to an ASCII "k"
@example("Stra\u00dfe \ufb01le")  # ß and the "fi" ligature stay as they are, so not words
@example("\ud800 a")  # a lone surrogate
def test_clean_phrase_matches_the_regex_version(text):
    assert clean_phrase(text) == regex_clean_phrase(text)


def test_clean_phrase_takes_any_value_as_its_text():
    assert clean_phrase(42) == regex_clean_phrase(42) == "42"


# --------------------------------------------------------------------------- whose data it is
def test_a_lexicon_keeps_a_copy_of_a_callers_dict():
    data = {"categories": {"fruit": ["Apple"]}, "synonyms": {"pome": ["Apple"]}}
    lex = CategoryLexicon(data)
    data["categories"]["fruit"].append("Pear")
    data["synonyms"]["pome"] = ["Pear"]
    assert lex.to_dict() == {"categories": {"fruit": ["Apple"]}, "synonyms": {"pome": ["Apple"]}}
    loaded = CategoryLexicon.load(data, base=None)  # the same through load
    data["categories"]["fruit"].clear()
    assert loaded.to_dict()["categories"] == {"fruit": ["Apple", "Pear"]}


def test_to_dict_is_a_copy_for_a_lexicon_read_from_a_file(tmp_path):
    path = tmp_path / "lex.json"
    path.write_text(json.dumps({"categories": {"fruit": ["Apple"]}}))
    for lex in (CategoryLexicon.load(path, base=None), CategoryLexicon.load(path)):
        out = lex.to_dict()
        out["categories"]["fruit"].append("Pear")
        assert lex.to_dict()["categories"]["fruit"] == ["Apple"]
        assert lex.types_for("fruit") == {"Apple"}


def test_the_default_lexicon_equals_one_built_from_a_copy_of_its_file(lex):
    copied = CategoryLexicon(json.loads(DEFAULT_PATH.read_text()), str(DEFAULT_PATH))
    assert copied.to_dict() == lex.to_dict()
    assert copied.object_nouns() == lex.object_nouns()
    for noun in (
        "the coffee machine",
        "shaker",
        "towel roll",
        "knives",
        "fruit",
        "a box of tissues",
    ):
        assert copied.types_for(noun) == lex.types_for(noun)


def test_a_subclass_load_runs_its_own_init(tmp_path):
    path = tmp_path / "lex.json"
    path.write_text(json.dumps({"categories": {"fruit": ["Apple"]}}))
    made = []

    class Mine(CategoryLexicon):
        def __init__(self, data, source="<dict>"):
            made.append(source)
            super().__init__(data, source)

    assert isinstance(Mine.load(path, base=None), Mine) and made == [str(path)]
