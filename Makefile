# manip_dynamics: one entry point from a bare machine.
#   make run                 set up .venv (ROS 2 Jazzy from PyPI), build, start the demo
#   make test                set up, build, run every test (exit code = the tests' verdict)
#   make test-cold           integration tests from an empty numba cache on a busy machine
#   make test-browser        the viewer in headless Chromium (installs Debian's chromium)
#   make run DURATION=10     stop the demo after 10 s
#   make run-mujoco          the same story with MuJoCo as the arm (docs/SIMULATOR.md)
#   make test ROS_DISTRO=kilted   the same on ROS 2 Kilted (.venv-kilted, install-kilted/)
#   make bench               run benchmarks/run_all.sh
#   make clean               remove build/install/log (make distclean: the venvs too)
# Every target keeps ROS traffic on this machine (loopback-only discovery).

SHELL := /bin/bash
# ROS_DISTRO: from the command line, or from the environment when it names a distro the PyPI
# set-up supports; otherwise (unset, or e.g. humble from a sourced /opt/ros) jazzy.
ifneq ($(origin ROS_DISTRO),command line)
ifeq ($(filter $(ROS_DISTRO),jazzy kilted),)
override ROS_DISTRO := jazzy
endif
endif
export ROS_DISTRO
# Loopback-only discovery: the range alone on Jazzy and Kilted (ROS_LOCALHOST_ONLY as well
# would make every process print two deprecation warnings).
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
unexport ROS_LOCALHOST_ONLY
DURATION ?=
export DURATION

.PHONY: all setup build test test-cold test-browser run run-mujoco bench lint clean distclean help

all: test

help:
	@sed -n '2,12p' Makefile

setup:
	@bash scripts/setup.sh

build: setup
	@bash scripts/build.sh

test: build
	@bash scripts/test.sh $(PYTEST_ARGS)

test-cold: build
	@bash scripts/test_cold.sh $(PYTEST_ARGS)

test-browser: build
	@bash scripts/test_browser.sh $(PYTEST_ARGS)

lint: build
	@bash scripts/test.sh -m linter $(PYTEST_ARGS)

run: build
	@bash scripts/run.sh

run-mujoco: build
	@bash scripts/run.sh --hardware mujoco

bench: build
	@if [ -f benchmarks/run_all.sh ]; then \
		source scripts/env.sh && bash benchmarks/run_all.sh; \
	else \
		echo "bench: benchmarks/run_all.sh does not exist yet"; \
	fi

clean:
	rm -rf build install log build-kilted install-kilted log-kilted

distclean: clean
	rm -rf .venv .venv-kilted
