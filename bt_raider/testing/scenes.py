"""Scenes the testing kit ships: a small kitchen written for bt_raider (our objects, our numbers).

The kitchen (``data/kitchen.json``, AI2-THOR metadata format, 39 objects) has the robot at
``(0, 0.9, -1.0)`` facing -z, with the Bowl, a Tomato, a ButterKnife and Bread on the island
counter in front of it (within its 1.1 m reach); the Apple, a Plate and a Book on the breakfast
bar behind it; the CoffeeMachine (off), a clean Mug, the Toaster, Lettuce, a Potato and the
Kettle on the west counter; a Knife and a Fork in two closed Drawers; a Cup and the WineBottle
in closed wall Cabinets; an Egg in the closed Fridge; the Microwave (closed, off), the
LightSwitch (on), two Stools, two StoveBurners with a Pan, the Sink and the GarbageCan.
"""

from __future__ import annotations

from pathlib import Path

from bt_raider.perception.scene import Scene

#: The small kitchen's file.
KITCHEN_PATH = Path(__file__).resolve().parent / "data" / "kitchen.json"


def small_kitchen() -> Scene:
    """A fresh copy of the small kitchen (change it freely)."""
    return Scene.load(KITCHEN_PATH)
