"""The steady clock for timers that must run whatever ``use_sim_time`` says: /diagnostics,
link supervision, a replayer that is itself the /clock source.  A timer on the node's clock
never fires under ``use_sim_time`` while nothing publishes /clock."""
from rclpy.clock import Clock, ClockType

STEADY = Clock(clock_type=ClockType.STEADY_TIME)
