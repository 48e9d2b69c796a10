"""ibeo LUX / SICK LD-MRS / Ibeo ECU: codec (package), session, emulator, and the ROS driver in ros/."""
