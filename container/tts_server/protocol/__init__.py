"""The canonical bidirectional session protocol (SPEC §3): events in, events out, errors."""
