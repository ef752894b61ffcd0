"""Guards in ROS 2 trees: the robot's actions as ROS 2 action servers (the ``ros2`` extra).

Generic over the user's message types, and importing only ``rclpy`` and message packages (a
system ROS 2, Jazzy or Kilted, needs no extra), each when first used:

* :mod:`~bt_raider.ros2.node`: :class:`~bt_raider.ros2.node.Spinner`, a node spinning on a
  background thread that creates entities safely and survives callback errors;
* :mod:`~bt_raider.ros2.scene`: the scene from a topic, numbered, for ``RaiderGuard(scene=...)``;
* :mod:`~bt_raider.ros2.robot`: :class:`~bt_raider.robot.actions.Robot` on action servers;
* :mod:`~bt_raider.ros2.person`: a person over a topic and a service;
* :mod:`~bt_raider.ros2.state`: the guards' verdicts, questions and recoveries on a topic;
* :mod:`~bt_raider.ros2.env`: the settings that keep traffic on this machine;
* :mod:`~bt_raider.ros2.interfaces`: bt_raider's own types, built from source, for robots
  without types of their own.

See docs/ros2.md.
"""
