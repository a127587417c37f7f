"""Stage 4, judge: compare what a backend returned with the expected outputs (bit-exact, indices
semantically), classify divergences by the registry's readings, apply expectations and the lock."""
