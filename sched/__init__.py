"""Scheduling and control codes; the latency table shared with the emulator."""
