; Written for bt_raider's tests: one durative action, which the classical planners refuse,
; and an empty (:functions) block, which UP's own reader rejects.
(define (domain lamp)
  (:requirements :strips :typing :durative-actions)
  (:types lamp)
  (:predicates (off ?l - lamp) (on ?l - lamp))
  (:functions)
  (:durative-action switch_on
    :parameters (?l - lamp)
    :duration (= ?duration 2)
    :condition (at start (off ?l))
    :effect (and (at start (not (off ?l))) (at end (on ?l)))))
