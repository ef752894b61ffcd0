"""Sub-commands of ``bt-raider``: one module each, with ``add_parser`` and ``run``."""
