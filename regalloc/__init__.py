"""Register allocation: liveness, interference, graph colouring, spilling."""
