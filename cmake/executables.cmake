# sim_bridge_add_executable(name=python.module)
# Writes a launcher that runs the module's main() through ros_sim_bridge.entry (stop signals
# handled before the module is imported), installed with the run bit at
# lib/${PROJECT_NAME}/<name>, where `ros2 run` and launch_ros look for executables.
function(sim_bridge_add_executable pair)
  string(REPLACE "=" ";" _parts "${pair}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _module)
  set(_file "${CMAKE_CURRENT_BINARY_DIR}/executables/${_name}")
  file(WRITE "${_file}"
    "#!/usr/bin/env python3\n"
    "from ros_sim_bridge.entry import run\n"
    "run('${_module}')\n")
  # the run bit on the file itself, so a --symlink-install link to it is executable too
  file(CHMOD "${_file}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
       GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  install(PROGRAMS "${_file}" DESTINATION lib/${PROJECT_NAME})
endfunction()
