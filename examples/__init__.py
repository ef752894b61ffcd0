"""Runnable scenarios shipped with bt_raider."""
