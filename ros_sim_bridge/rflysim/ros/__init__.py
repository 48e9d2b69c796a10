"""rflysim → ROS: conversions and the node (needs rclpy)."""
