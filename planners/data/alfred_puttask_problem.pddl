;; A small problem for ALFRED's PutTaskExtended domain (askforalfred/alfred, MIT licence):
;; slice the apple that sits in the fridge and put the mug away in the cabinet.
;; Written for bt_raider's tests; ALFRED generates its problems at run time and stores none.
;;
;; unified-planning reads the domain only after two mechanical edits (see
;; tests/planners/test_pddl.py::alfred_domain): declare the type names the actions use as
;;   (:constants SinkBasinType MicrowaveType FridgeType - rtype KnifeType ButterKnifeType - otype)
;; and name the cost fluent total-cost (PDDL 3.1 action costs) instead of totalCost.
;; Without those, the reader rejects the domain (undeclared constant), and with totalCost it
;; is a numeric-fluent problem no installed engine supports.
(define (problem slice_apple_and_store_mug)
  (:domain put_task)
  (:objects
    robot - agent
    loc_start loc_counter loc_fridge loc_cabinet - location
    countertop fridge cabinet - receptacle
    apple mug knife - object
    AppleType MugType - otype
    CounterTopType CabinetType - rtype
  )
  (:init
    (atLocation robot loc_start)
    (receptacleAtLocation countertop loc_counter)
    (receptacleAtLocation fridge loc_fridge)
    (receptacleAtLocation cabinet loc_cabinet)
    (receptacleType countertop CounterTopType)
    (receptacleType fridge FridgeType)
    (receptacleType cabinet CabinetType)
    (openable fridge)
    (openable cabinet)
    (objectType apple AppleType)
    (objectType mug MugType)
    (objectType knife KnifeType)
    (sliceable apple)
    (objectAtLocation apple loc_fridge)
    (inReceptacle apple fridge)
    (objectAtLocation mug loc_counter)
    (inReceptacle mug countertop)
    (objectAtLocation knife loc_counter)
    (inReceptacle knife countertop)
    (= (total-cost) 0)
    (= (distance loc_start loc_start) 0)
    (= (distance loc_start loc_counter) 2)
    (= (distance loc_start loc_fridge) 3)
    (= (distance loc_start loc_cabinet) 3)
    (= (distance loc_counter loc_start) 2)
    (= (distance loc_counter loc_counter) 0)
    (= (distance loc_counter loc_fridge) 1)
    (= (distance loc_counter loc_cabinet) 1)
    (= (distance loc_fridge loc_start) 3)
    (= (distance loc_fridge loc_counter) 1)
    (= (distance loc_fridge loc_fridge) 0)
    (= (distance loc_fridge loc_cabinet) 2)
    (= (distance loc_cabinet loc_start) 3)
    (= (distance loc_cabinet loc_counter) 1)
    (= (distance loc_cabinet loc_fridge) 2)
    (= (distance loc_cabinet loc_cabinet) 0)
  )
  (:goal (and
    (isSliced apple)
    (inReceptacle mug cabinet)
  ))
  (:metric minimize (total-cost))
)
