"""What may be in the household: the objects and their categories, the furniture of each room,
and the goal templates an episode picks its sub-goals from (C-WAH's).

Plain data, read by :meth:`~bt_raider.simulation.multirobot.MultiRobotSim.generate`; the
furniture names the rooms of :func:`~bt_raider.simulation.house.default_house`.
"""

from __future__ import annotations

#: What kind of thing every object name is (the categories containers can hold).
CATALOGUE: dict[str, str] = {
    **dict.fromkeys(
        "cupcake pudding apple juice wine poundcake pancake banana bread chips cereal milk "
        "cheese salmon".split(),
        "food",
    ),
    **dict.fromkeys("plate fork mug glass bowl spoon knife".split(), "tableware"),
    **dict.fromkeys(
        "book remote pillow towel toothbrush candle cellphone keys pen soap toy magazine "
        "slippers".split(),
        "misc",
    ),
}

#: Furniture: name, room, kind (surface / container), categories it holds ("*": anything).
FURNITURE: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("coffeetable", "livingroom", "surface", ("*",)),
    ("sofa", "livingroom", "surface", ("misc",)),
    ("tvstand", "livingroom", "surface", ("*",)),
    ("cabinet", "livingroom", "container", ("food", "tableware", "misc")),
    ("kitchentable", "kitchen", "surface", ("*",)),
    ("kitchencounter", "kitchen", "surface", ("food", "tableware")),
    ("fridge", "kitchen", "container", ("food",)),
    ("kitchencabinet", "kitchen", "container", ("food", "tableware")),
    ("microwave", "kitchen", "container", ("food",)),
    ("dishwasher", "kitchen", "container", ("tableware",)),
    ("desk", "bedroom", "surface", ("*",)),
    ("bed", "bedroom", "surface", ("misc",)),
    ("nightstand", "bedroom", "container", ("misc", "food")),
    ("wardrobe", "bedroom", "container", ("misc",)),
    ("bathroomcounter", "bathroom", "surface", ("misc",)),
    ("bathroomcabinet", "bathroom", "container", ("misc",)),
)

#: Goal templates (C-WAH Table 6): location, relation, the objects a goal picks 3-5 from.
GOALS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "afternoon-tea": (
        "coffeetable",
        "on",
        ("cupcake", "pudding", "apple", "juice", "wine", "poundcake"),
    ),
    "dinner-table": ("kitchentable", "on", ("plate", "fork", "mug", "glass", "bowl", "spoon")),
}
