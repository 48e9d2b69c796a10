"""The monoDrive simulator emulator (executable ``monodrive_sim``): :mod:`.scene` (the world
and its sensors' samples), :mod:`.server` (control and sensor sockets), :mod:`.cli`."""
