# sim_bridge_add_executable(name=python.module)
# Builds cmake/launcher.c for it (the module compiled in) and installs the binary at
# lib/${PROJECT_NAME}/<name>, where `ros2 run` and launch_ros look for executables.  It blocks
# SIGINT and SIGTERM, then runs Python, whose ros_sim_bridge.entry unblocks them once its
# handlers are in place: a stop signal at any moment of the start-up is an exit 0.
function(sim_bridge_add_executable pair)
  string(REPLACE "=" ";" _parts "${pair}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _module)
  set(_target "sim_bridge_launcher_${_name}")
  add_executable(${_target} "${CMAKE_CURRENT_SOURCE_DIR}/cmake/launcher.c")
  target_compile_definitions(${_target} PRIVATE "SIM_BRIDGE_MODULE=\"${_module}\"")
  set_target_properties(${_target} PROPERTIES OUTPUT_NAME "${_name}" C_STANDARD 99
    RUNTIME_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/executables")
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${_target} PRIVATE -O2 -Wall -Wextra)
  endif()
  install(TARGETS ${_target} RUNTIME DESTINATION lib/${PROJECT_NAME})
endfunction()
