; A care home's robot (issue 34's newcomer): rooms joined by doors, residents and staff, items
; to fetch and hand over, a call button to press. The action names and argument orders are the
; home's own: navigate-to puts the destination second and the door it passes third. Each
; parameter's role is derived from its type and the effects (bt_raider.planners.contracts).
(define (domain care-home)
  (:requirements :strips :typing)
  (:types robot room door item person button)
  (:predicates
    (at ?r - robot ?x - room)
    (connects ?d - door ?a - room ?b - room)
    (open ?d - door)
    (item_in ?i - item ?x - room)
    (person_in ?p - person ?x - room)
    (holding ?r - robot ?i - item)
    (hand_free ?r - robot)
    (has ?p - person ?i - item)
    (button_in ?b - button ?x - room)
    (pressed ?b - button))

  (:action navigate-to
    :parameters (?r - robot ?from - room ?to - room ?door - door)
    :precondition (and (at ?r ?from) (connects ?door ?from ?to) (open ?door))
    :effect (and (at ?r ?to) (not (at ?r ?from))))

  (:action open-door
    :parameters (?r - robot ?d - door ?x - room)
    :precondition (at ?r ?x)
    :effect (open ?d))

  (:action pick-up
    :parameters (?r - robot ?i - item ?x - room)
    :precondition (and (at ?r ?x) (item_in ?i ?x) (hand_free ?r))
    :effect (and (holding ?r ?i) (not (item_in ?i ?x)) (not (hand_free ?r))))

  (:action hand-to
    :parameters (?r - robot ?p - person ?i - item ?x - room)
    :precondition (and (at ?r ?x) (person_in ?p ?x) (holding ?r ?i))
    :effect (and (has ?p ?i) (hand_free ?r) (not (holding ?r ?i)))))
