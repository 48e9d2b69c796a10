"""Transports: where bytes come from and go to (UDP, TCP, files). No protocol knowledge, no rclpy."""
