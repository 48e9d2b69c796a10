"""RflySim UDP_30100_TrueSimRecv ground truth: codec, emulator, and the ROS node in ros/."""
