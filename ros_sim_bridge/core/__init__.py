"""ROS-free mechanisms every source uses: binary reads and CodecError, the stream framer, NTP
time, frame conversions, transports (UDP, TCP, file) and the emulators' command line."""
