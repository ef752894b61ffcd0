; Deliver Adriana's medicine from the counter to her (RAIDER section 5.2, Appendix D).
(define (problem deliver-medicine)
  (:domain medicine-delivery)
  (:objects
    tiago - robot
    home medicine_counter - location
    adrianas_medicine - item
    adriana - person)
  (:init
    (robot_at tiago home)
    (hand_free tiago)
    (item_at adrianas_medicine medicine_counter))
  (:goal (has adriana adrianas_medicine)))
