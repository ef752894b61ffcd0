"""A fleet over Zenoh: the message bus between robot processes and the shared fleet memory.

Needs the ``fleet`` extra (``pip install "bt_raider[fleet]"``; the fleet memory also
``memory``).
"""
