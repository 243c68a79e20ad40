"""Helpers shared by the store tests: record factories and a writer script for subprocesses."""
