#!/bin/sh
# Installs what Plaza's release archive needs to run on Debian 12 or Ubuntu 22.04 and later, and
# nothing else: libvips (images, loaded at the first upload), ffmpeg (videos) and the CA
# certificates (mail over TLS, sign-in providers, push, link previews). The Swift runtime is in
# the binary. The container image (Containerfile) and the clean-root test (e2e/test_dist.py) run
# this same script, so what is tested is what the image runs.
set -eu
packages="libvips42 ffmpeg ca-certificates"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # the list is split on purpose
apt-get install -y -qq --no-install-recommends $packages
rm -rf /var/lib/apt/lists/*
