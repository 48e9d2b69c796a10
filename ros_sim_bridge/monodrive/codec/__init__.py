"""monoDrive codec (sans-IO): control framing and envelope, message bodies, sensor framing,
headers and payloads, and monoDrive's JSON configuration files (SUPPLEMENT §4)."""
