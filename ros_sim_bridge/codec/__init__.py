"""Sans-IO protocol codecs: bytes in, typed values out, and back. No sockets, no rclpy."""
