"""A fleet over Zenoh: the message bus between robot processes, its signatures (only the team's
own robots can speak for a robot) and the shared fleet memory.

Needs the ``fleet`` extra (``pip install "bt_raider[fleet]"``; the fleet memory also
``memory``).
"""
