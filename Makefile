# Quick start on a machine without ROS:  make demo  |  make test
# The PyPI ROS 2 venv stands in for /opt/ros/<distro>; it lives outside the source tree
# (CMake refuses exported include paths inside the source directory).
# ROS_DISTRO picks the ROS 2 distribution: kilted (default) or jazzy, e.g. make test ROS_DISTRO=jazzy.
# Each has its own requirements (scripts/requirements-<distro>.txt), venv and build/install
# folders (Kilted: venv, build/, install/; Jazzy: venv-jazzy, build-jazzy/, install-jazzy/).
ROS_DISTRO ?= kilted
ifeq ($(wildcard scripts/requirements-$(ROS_DISTRO).txt),)
$(error ROS_DISTRO=$(ROS_DISTRO): no scripts/requirements-$(ROS_DISTRO).txt (tested here: kilted, jazzy))
endif
ifeq ($(ROS_DISTRO),kilted)
DISTRO_SUFFIX :=
else
DISTRO_SUFFIX := -$(ROS_DISTRO)
endif
VENV      ?= $(HOME)/.cache/ros_sim_bridge/venv$(DISTRO_SUFFIX)
RUN       := scripts/with-venv.sh $(VENV)
SOURCES   := $(shell find CMakeLists.txt package.xml cmake msg srv launch config ros_sim_bridge \
               -type f -not -path '*/__pycache__/*' 2>/dev/null)
# Separate trees (e.g. two builds side by side): make test BUILD_BASE=/tmp/b INSTALL_BASE=/tmp/i
BUILD_BASE   ?= build$(DISTRO_SUFFIX)
INSTALL_BASE ?= install$(DISTRO_SUFFIX)
export INSTALL_BASE
BUILT     := $(INSTALL_BASE)/.built
PYTEST_ARGS ?=

.PHONY: all setup build test fuzz demo bench clean distclean
all: build

setup: $(VENV)/.ready
$(VENV)/.ready: scripts/setup-venv.sh scripts/requirements-$(ROS_DISTRO).txt \
                compat/tf2_msgs/msg/TFMessage.msg
	@scripts/setup-venv.sh $(VENV) $(ROS_DISTRO)

# colcon build, exactly as on a robot, against the venv's ROS 2; quiet unless it fails.
build: $(BUILT)
$(BUILT): $(VENV)/.ready $(SOURCES)
	@echo "[build] colcon build ros_sim_bridge (log: $(BUILD_BASE).log)"
	@$(RUN) colcon --log-base $(BUILD_BASE)/log build --symlink-install \
	    --build-base $(BUILD_BASE) --install-base $(INSTALL_BASE) \
	    --event-handlers console_cohesion- console_stderr- \
	    --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE=$(VENV)/bin/python \
	    > $(BUILD_BASE).log 2>&1 || { tail -40 $(BUILD_BASE).log; exit 1; }
	@echo $(ROS_DISTRO) > $(INSTALL_BASE)/ros_distro
	@touch $@

test: $(BUILT)
	@$(RUN) pytest $(PYTEST_ARGS)

# The fuzz suite for FUZZ_SECONDS in all (split over its entry points), fresh random inputs;
# prints the inputs tried per entry point (make test runs the short, seeded version).
FUZZ_SECONDS ?= 60
fuzz: $(BUILT)
	@FUZZ_PROFILE=long FUZZ_SECONDS=$(FUZZ_SECONDS) $(RUN) pytest test/fuzz -q --timeout=0 \
	    -p no:cacheprovider $(PYTEST_ARGS)

# The suite against its emulators, recorded to $(BUILD_BASE)/demo_bag (MCAP), a table per topic,
# $(BUILD_BASE)/demo.png drawn from the bag (docs/demo.png is a committed copy), then the
# per-driver checks.
demo: $(BUILT)
	@$(RUN) $(INSTALL_BASE)/ros_sim_bridge/lib/ros_sim_bridge/sim_bridge_demo \
	    --bag $(BUILD_BASE)/demo_bag --picture $(BUILD_BASE)/demo.png

bench: $(BUILT)
	@for b in bench/bench_*.py; do echo "== $$b"; $(RUN) python $$b || exit 1; done

clean:
	rm -rf $(BUILD_BASE) $(INSTALL_BASE) log $(BUILD_BASE).log

distclean: clean
	rm -rf $(VENV) $(VENV).setup.log
