"""PDDL written by the tests: a typed gripper of any size, and a type and an object that share
a name."""

from __future__ import annotations

#: Gripper with types: pyperplan's search time grows fast with the number of balls (60 balls
#: take it well over 10 s; Fast Downward a second or two).
_GRIPPER = """(define (domain gripper-typed)
 (:requirements :strips :typing)
 (:types room ball gripper)
 (:predicates (at-robby ?r - room) (at ?b - ball ?r - room) (free ?g - gripper)
              (carry ?b - ball ?g - gripper))
 (:action move :parameters (?from ?to - room)
  :precondition (at-robby ?from)
  :effect (and (at-robby ?to) (not (at-robby ?from))))
 (:action pick :parameters (?b - ball ?r - room ?g - gripper)
  :precondition (and (at ?b ?r) (at-robby ?r) (free ?g))
  :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))
 (:action drop :parameters (?b - ball ?r - room ?g - gripper)
  :precondition (and (carry ?b ?g) (at-robby ?r))
  :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g)))))
"""


def gripper_problem(balls: int) -> str:
    names = " ".join(f"ball{i}" for i in range(balls))
    init = " ".join(f"(at ball{i} rooma)" for i in range(balls))
    goal = " ".join(f"(at ball{i} roomb)" for i in range(balls))
    return (
        f"(define (problem gripper-{balls}) (:domain gripper-typed)"
        f" (:objects {names} - ball rooma roomb - room left right - gripper)"
        f" (:init (at-robby rooma) (free left) (free right) {init})"
        f" (:goal (and {goal})))"
    )


def gripper_domain() -> str:
    """The typed gripper domain of :func:`gripper_problem`."""
    return _GRIPPER


SHARED_DOMAIN = """(define (domain carts)
 (:requirements :strips :typing)
 (:types cart place)
 (:predicates (at ?c - cart ?p - place) (link ?a - place ?b - place))
 (:action push :parameters (?c - cart ?from - place ?to - place)
  :precondition (and (at ?c ?from) (link ?from ?to))
  :effect (and (at ?c ?to) (not (at ?c ?from)))))
"""
#: The object ``cart`` has the name of its type: valid PDDL, refused by UP by default.
SHARED_PROBLEM = """(define (problem move-cart) (:domain carts)
 (:objects cart - cart dock aisle shelf - place)
 (:init (at cart dock) (link dock aisle) (link aisle shelf))
 (:goal (at cart shelf)))
"""


#: Pigeons into holes, one per hole, every pigeon placed: with more pigeons than holes no plan
#: exists, yet every goal fact is reachable on its own, so a search has to exhaust the states.
PIGEONS_DOMAIN = """(define (domain holes)
 (:requirements :strips :typing)
 (:types pigeon hole)
 (:predicates (free ?p - pigeon) (empty ?h - hole) (in ?p - pigeon ?h - hole)
              (placed ?p - pigeon))
 (:action put :parameters (?p - pigeon ?h - hole)
  :precondition (and (free ?p) (empty ?h))
  :effect (and (in ?p ?h) (placed ?p) (not (free ?p)) (not (empty ?h))))
 (:action take :parameters (?p - pigeon ?h - hole)
  :precondition (in ?p ?h)
  :effect (and (free ?p) (empty ?h) (not (placed ?p)) (not (in ?p ?h)))))
"""


def pigeons_problem(holes: int) -> str:
    """``holes + 1`` pigeons, ``holes`` holes: no plan."""
    pigeons = [f"p{i}" for i in range(holes + 1)]
    spots = [f"h{i}" for i in range(holes)]
    return (
        f"(define (problem pigeons-{holes}) (:domain holes)"
        f" (:objects {' '.join(pigeons)} - pigeon {' '.join(spots)} - hole)"
        f" (:init {' '.join(f'(free {p})' for p in pigeons)}"
        f" {' '.join(f'(empty {h})' for h in spots)})"
        f" (:goal (and {' '.join(f'(placed {p})' for p in pigeons)})))"
    )
