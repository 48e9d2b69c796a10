"""Built-in RflySim ground-truth sender: multicopters flying over a GPS origin, sent over UDP.

A stand-in for CopterSim / RflySim3D when neither is at hand: vehicle ``i`` gets its truth on
``base_port + 2·(i − 1)`` (SUPPLEMENT §2.1) in one of the four truth forms of
:mod:`ros_sim_bridge.rflysim.codec`, plus the 32-byte GPS origin now and then and a 12-byte crash
notice when a (scripted) collision starts.

:mod:`.scene` is the flying vehicles (pure, steppable), :mod:`.server` the UDP sender,
:mod:`.cli` the ``rflysim_sim`` command line
(``python -m ros_sim_bridge.rflysim.emulator.cli --help``).
"""
