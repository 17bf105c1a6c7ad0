#!/usr/bin/env bash
# Installs what building and testing Plaza needs, and only what is missing.
#   scripts/install-deps.sh        what `make run` / `make build` need
#   scripts/install-deps.sh test   plus PostgreSQL, headless Chromium + chromedriver for the
#                                  browser tests, and the Python test tools (`make test`)
# Debian/Ubuntu use apt-get, macOS uses Homebrew. Safe to run again: with everything present
# it only checks and returns. Written for bash 3.2 too (macOS's /bin/bash).
set -euo pipefail

mode="${1:-run}"
case "$mode" in
  run | test) ;;
  *) echo "usage: $0 [test]" >&2; exit 2 ;;
esac

# Swift itself cannot be installed from the package managers we use.
if ! command -v swift >/dev/null 2>&1; then
  echo "error: 'swift' is not on PATH. Install Swift 6 (https://www.swift.org/install/), then run this again." >&2
  exit 1
fi

# Package lists, space-separated. Plaza loads libvips (images) at the first upload; libvips-dev
# is the package name that stays the same across Debian and Ubuntu releases. ffmpeg (with
# ffprobe) processes videos, run as a child process. zlib gzips the web app's scripts and styles
# (macOS has it). SQLite and BoringSSL come with the Swift packages.
apt_build="libvips-dev zlib1g-dev ffmpeg"
brew_build="vips ffmpeg"
# zbar (zbarimg) reads the QR codes Plaza draws back in the tests.
apt_test="postgresql openssl curl nginx iproute2 fonts-dejavu-core fonts-noto-color-emoji debootstrap systemd caddy zbar-tools"
brew_test="postgresql@16 nginx zbar"
# The browser tests (e2e/, selenium): Debian's Chromium and its driver, Homebrew's casks. With
# CHROMIUM_BIN and CHROMEDRIVER set you bring your own and these are left alone.
apt_browser="chromium chromium-driver"
brew_browser_casks="chromium chromedriver"
if [ -n "${CHROMIUM_BIN:-}" ] && [ -n "${CHROMEDRIVER:-}" ]; then
  apt_browser=""
  brew_browser_casks=""
fi

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

want_system="$apt_build"
case "$(uname -s)" in
  Linux)
    command -v apt-get >/dev/null 2>&1 || { echo "error: on Linux only Debian/Ubuntu (apt-get) is supported." >&2; exit 1; }
    if [ "$mode" = test ]; then
      want_system="$want_system $apt_test $apt_browser"
      command -v python3 >/dev/null 2>&1 || want_system="$want_system python3"
      python3 -m pip --version >/dev/null 2>&1 || want_system="$want_system python3-pip"
    fi
    missing=""
    for pkg in $want_system; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing="$missing $pkg"
    done
    if [ -n "$missing" ]; then
      sudo_if_needed apt-get update -qq
      case "$missing " in
        *" chromium "* | *" chromium-driver "*)
          # Ubuntu has no real chromium package: its chromium(-browser) only installs the snap.
          candidate=$(apt-cache policy chromium 2>/dev/null | sed -n 's/^ *Candidate: *//p' || true)
          case "$candidate" in
            "" | "(none)" | *snap*)
              echo "install-deps: warning: apt has no (non-snap) 'chromium' package here, as on Ubuntu;" \
                "the browser tests need one. Install Chromium or Chrome and the chromedriver of the" \
                "same major version yourself, then set CHROMIUM_BIN and CHROMEDRIVER (with the snap:" \
                "CHROMIUM_BIN=/snap/bin/chromium CHROMEDRIVER=/snap/bin/chromium.chromedriver)." >&2
              rest=""
              for pkg in $missing; do
                case "$pkg" in chromium | chromium-driver) ;; *) rest="$rest $pkg" ;; esac
              done
              missing="$rest"
              ;;
          esac
          ;;
      esac
    fi
    if [ -n "$missing" ]; then
      echo "install-deps: apt-get install$missing"
      # shellcheck disable=SC2086 # word splitting of the package list is intended
      sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
    fi
    ;;
  Darwin)
    command -v brew >/dev/null 2>&1 || { echo "error: on macOS Homebrew (https://brew.sh) is needed." >&2; exit 1; }
    want_system="$brew_build"
    [ "$mode" = test ] && want_system="$want_system $brew_test"
    for pkg in $want_system; do
      brew list --versions "$pkg" >/dev/null 2>&1 || brew install "$pkg"
    done
    if [ "$mode" = test ]; then
      for cask in $brew_browser_casks; do
        brew list --cask "$cask" >/dev/null 2>&1 || brew install --cask "$cask"
      done
    fi
    ;;
  *)
    echo "warning: unknown system $(uname -s); install PostgreSQL, Python 3, Chromium and chromedriver yourself." >&2
    ;;
esac

if [ "$mode" = test ]; then
  # find_spec looks for the modules without importing them (fast).
  pips=$(python3 -c '
import importlib.util as u
# module: what pip installs when it is missing (selenium drives Chromium in the browser tests)
# aiosmtpd: the real SMTP servers of the mail tests (scripts/smtp-sink.py)
# oidc_provider_mock: the real OpenID Connect provider of the sign-in tests (e2e/test_oidc.py)
# http_ece: decrypts Web Push messages; hypercorn (with h2): the HTTP/2 fake of APNs (e2e/test_push.py)
# mastodon: Mastodon.py, a real client of the Mastodon API (e2e/test_mastodon.py)
# axe_selenium_python: ships axe-core, for the accessibility tour (e2e/test_web_accessibility.py)
# feedparser: a real reader of RSS and Atom, for the feeds to subscribe to (e2e/test_feeds.py)
wanted = {"pytest": "pytest", "requests": "requests", "selenium": "selenium>=4.20,<5", "aiosmtpd": "aiosmtpd>=1.4,<2",
          "oidc_provider_mock": "oidc-provider-mock>=0.3.4,<0.4", "http_ece": "http_ece>=1.2,<2",
          "hypercorn": "hypercorn>=0.16,<0.19", "h2": "h2>=4,<5", "cryptography": "cryptography>=42",
          "mastodon": "Mastodon.py>=2,<3", "axe_selenium_python": "axe-selenium-python>=2.1.6,<3",
          "feedparser": "feedparser>=6,<7"}
print(" ".join(spec for m, spec in wanted.items() if u.find_spec(m) is None))')
  # moto's S3 server for the S3 media storage tests (scripts/with-moto.sh).
  command -v moto_server >/dev/null 2>&1 || pips="$pips moto[server]>=5,<6"
  # scripts/schemathesis.sh speaks schemathesis 4's command line.
  case "$(schemathesis --version 2>/dev/null || true)" in
    *" 4."*) ;;
    *) pips="$pips schemathesis>=4,<5" ;;
  esac
  if [ -n "${pips// /}" ]; then
    echo "install-deps: pip install $pips"
    # PIP_BREAK_SYSTEM_PACKAGES: a distribution's own Python (PEP 668) refuses plain pip installs.
    # shellcheck disable=SC2086
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore \
      python3 -m pip install --quiet --disable-pip-version-check $pips
    # pyenv's shims only see new commands after a rehash.
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  fi
fi
echo "install-deps: ok ($mode)"
