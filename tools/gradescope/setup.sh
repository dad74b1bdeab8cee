#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (choose the Ubuntu 24.04
# base image: Python 3.12). It installs the course, zipped beside this file as course/, with
# the grader and the released student edition it ships, into a virtual environment.
set -eu
apt-get update && apt-get install -y python3-venv
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install /autograder/source/course
