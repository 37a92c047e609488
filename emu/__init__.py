"""A SASS emulator that runs cubins on the CPU and checks their control codes."""
