"""Helpers shared by more than one rule family (each family keeps its own in ``_helpers``)."""
