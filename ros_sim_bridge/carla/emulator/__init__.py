"""The CARLA recording generator: scene, writer, command line."""
