"""The ibeo LUX / LD-MRS / ECU emulator: :mod:`.scene` (the sensor's world, pure),
:mod:`.server` (its TCP server), :mod:`.cli` (``ibeo_lux_sim``)."""
