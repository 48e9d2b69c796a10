"""ROS mechanisms every node uses: PointCloud2, stamps, geometry/TF, markers, diagnostics,
parameters, QoS and the node runner."""
