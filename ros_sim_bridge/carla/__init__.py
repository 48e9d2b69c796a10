"""CARLA recorder ``.log`` files: codec, generator, offline CLI and the ROS replayer."""
