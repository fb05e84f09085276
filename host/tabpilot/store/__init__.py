"""The record (SQLite task history) and the settings file."""
