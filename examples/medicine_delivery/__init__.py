"""RAIDER's medicine-delivery scenario (bt-raider demo medicine-delivery)."""
