"""Protocol dialects: thin adapters from a wire format onto the one session engine."""
