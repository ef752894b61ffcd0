"""Two robots set a table together with REVECA validation (bt-raider demo cooperative-table)."""
