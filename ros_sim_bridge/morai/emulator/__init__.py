"""Built-in MORAI SIM emulator: a small scripted scene speaking the MORAI UDP protocol.

:mod:`.scene` is the world (:class:`~.scene.MoraiScene`, no sockets, no clocks),
:mod:`.server` its UDP sockets (:class:`~.server.MoraiEmulator`: binds on 127.0.0.1, receives
commands on the MORAI example ports, sends status datagrams to 127.0.0.1 at ``rate`` Hz; ports
default to SUPPLEMENT §1.5), :mod:`.cli` the ``morai_sim`` command line
(``python -m ros_sim_bridge.morai.emulator.cli --rate 20 --release newest``).
"""
