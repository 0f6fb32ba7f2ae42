"""Sidewalk Watch."""
