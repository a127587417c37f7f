"""Helpers of the project's own tests, named by what they provide."""
