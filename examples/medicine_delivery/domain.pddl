; RAIDER's assistive plan (Izquierdo-Badiola et al., section 5.2): a robot delivers a medicine
; to a patient. Four actions: approach a place, pick an item there, approach a person, hand
; the item over. The issues RAIDER finds on the way (a blocked path, two medicines, an item out
; of reach, a person not recognised, a person not looking) are not in this domain: the planner
; plans as if the world were nominal, and the guards check each step against the scene.
(define (domain medicine-delivery)
  (:requirements :strips :typing)
  (:types robot location item person)
  (:predicates
    (robot_at ?r - robot ?l - location)
    (item_at ?i - item ?l - location)
    (holding ?r - robot ?i - item)
    (hand_free ?r - robot)
    (near ?r - robot ?p - person)
    (has ?p - person ?i - item))

  (:action approach
    :parameters (?r - robot ?from - location ?to - location)
    :precondition (robot_at ?r ?from)
    :effect (and (robot_at ?r ?to) (not (robot_at ?r ?from))))

  (:action pick
    :parameters (?r - robot ?i - item ?l - location)
    :precondition (and (robot_at ?r ?l) (item_at ?i ?l) (hand_free ?r))
    :effect (and (holding ?r ?i) (not (item_at ?i ?l)) (not (hand_free ?r))))

  (:action approach_person
    :parameters (?r - robot ?from - location ?p - person)
    :precondition (robot_at ?r ?from)
    :effect (and (near ?r ?p) (not (robot_at ?r ?from))))

  (:action handover
    :parameters (?r - robot ?i - item ?p - person)
    :precondition (and (holding ?r ?i) (near ?r ?p))
    :effect (and (has ?p ?i) (hand_free ?r) (not (holding ?r ?i)) (not (near ?r ?p)))))
