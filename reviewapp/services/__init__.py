"""Writes and multi-step work. Views and tasks call these; they hold the rules."""
