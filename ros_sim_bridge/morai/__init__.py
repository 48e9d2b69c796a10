"""MORAI SIM UDP interface: codec (package), emulator, and the ROS bridge in ros/."""
