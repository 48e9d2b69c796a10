"""monoDrive simulator client: JSON control channel and TCP sensor streams (SUPPLEMENT §4)."""
