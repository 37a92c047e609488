"""Development-time scripts (corpus harvesting, ISA probing); not part of the package."""
