"""Ports handed to tests, demos and benchmarks come from PORT_RANGE, above the kernel's ephemeral
range, so no outgoing connection can take one before its server binds it."""
import socket

from ros_sim_bridge.tools.ports import PORT_RANGE, free_tcp_port, free_udp_ports


def _ephemeral_range():
    with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
        low, high = (int(v) for v in f.read().split())
    return low, high


def test_free_tcp_port_is_in_port_range_outside_the_ephemeral_range_and_listenable():
    low, high = _ephemeral_range()
    for _ in range(50):
        port = free_tcp_port()
        assert PORT_RANGE[0] <= port <= PORT_RANGE[1]
        assert not low <= port <= high
        with socket.socket() as s:
            s.bind(('127.0.0.1', port))
            s.listen()


def test_free_udp_ports_are_in_port_range_and_bindable():
    base = free_udp_ports(4, step=2)
    assert PORT_RANGE[0] <= base and base + 6 <= PORT_RANGE[1]
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
    try:
        for i, s in enumerate(socks):
            s.bind(('127.0.0.1', base + 2 * i))
    finally:
        for s in socks:
            s.close()
