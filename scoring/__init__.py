"""Scoring of logged assistant answers: a pure library, usable without Django."""
