"""A fleet over Zenoh: the message bus between robot processes and the shared fleet memory.

Needs the ``zenoh`` extra (``pip install "bt_raider[zenoh]"``).
"""
