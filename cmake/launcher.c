/* The launcher of one installed executable (cmake/executables.cmake builds one per name, with
 * SIM_BRIDGE_MODULE the Python module whose main() it runs).
 *
 * A Python launcher cannot handle a stop signal that arrives while the interpreter itself
 * starts (25-55 ms before its first line runs): SIGINT and SIGTERM then kill the process
 * (exit -2 / -15) or are lost.  This one blocks both, then becomes Python (execvp keeps the
 * signal mask): a signal that arrives meanwhile stays pending until ros_sim_bridge.entry has
 * installed its handlers and unblocks them, and ends the process with exit 0.
 *
 * Python runs `-c CODE argv0 args...`: CODE puts argv0 back as sys.argv[0] (the name
 * argparse and rclpy see) and drops the current directory that -c puts first on sys.path (a
 * source checkout there would shadow the installed package), as a script launcher would.
 *
 * On Linux the node also gets SIGTERM when its parent dies (PR_SET_PDEATHSIG; it survives
 * execvp): `ros2 launch` ended by SIGTERM alone exits without stopping its children
 * (ros2/launch#666), and no node outlives it.  A parent that died before prctl is seen by
 * getppid() no longer being the pid it was. */
#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#ifndef SIM_BRIDGE_MODULE
#error "SIM_BRIDGE_MODULE (the Python module to run) is not defined"
#endif

static const char CODE[] =
    "import sys\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "sys.argv[0] = sys.argv.pop(1)\n"
    "from ros_sim_bridge.entry import run\n"
    "run('" SIM_BRIDGE_MODULE "')\n";

int main(int argc, char **argv) {
#ifdef __linux__
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
        return 0;   /* the parent is already gone: stop as SIGTERM would have stopped us */
#endif
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigprocmask(SIG_BLOCK, &stops, NULL);

    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (args == NULL) {
        perror("launcher");
        return 1;
    }
    args[0] = "python3";
    args[1] = "-c";
    args[2] = (char *)CODE;
    for (int i = 0; i < argc; i++)
        args[3 + i] = argv[i];
    execvp(args[0], args);
    fprintf(stderr, "%s: cannot run python3: %s\n", argc ? argv[0] : "launcher", strerror(errno));
    return 127;
}
