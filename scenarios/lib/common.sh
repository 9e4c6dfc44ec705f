# Shared by the scenarios' setup scripts: `. "$(dirname "$0")/../lib/common.sh"`.
#
#   need_apt PKG...        install the Debian packages that are missing (one apt-get call)
#   need_venv DIR PKG...   a venv on Debian's python3 (--system-site-packages, so the
#                          python3-* packages stay visible) with these PyPI packages;
#                          DIR (a scenario's .venv, which its plans name) is a link to
#                          the venv, kept with the others in one folder out of the
#                          sources: $SHOOTOUT_VENVS, else .venvs/ at the checkout's top
#                          (ignored by git; delete it to reclaim the space)
#
# Both are idempotent and return at once when everything is there. While apt installs,
# a temporary policy-rc.d keeps Debian from starting the packages' system services
# (apache2, nginx, uwsgi…): the scenarios start their own, on ports shootout chooses.
set -euo pipefail

say() { printf '== %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "need root to run: $* (install sudo, or run the setup as root)" >&2
        return 1
    fi
}

need_apt() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]} (Debian packages)"
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [ ! -e "$policy" ]; then
        # "exit 101" = services may not be started (invoke-rc.d's convention).
        as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
        made_policy=1
    fi
    local rc=0
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null 2>&1 || {
        as_root apt-get update -qq >/dev/null &&
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                "${missing[@]}" >/dev/null
    } || rc=$?
    [ -n "$made_policy" ] && as_root rm -f "$policy"
    if [ $rc -ne 0 ]; then
        echo "apt-get could not install: ${missing[*]}" >&2
        return $rc
    fi
}

need_venv() {
    local dir=$1
    shift
    local want="$*"
    local real=$dir
    # A venv made in place by an older setup is used where it is; otherwise DIR links
    # to the scenario's venv in the venvs' folder.
    if [ -L "$dir" ] || [ ! -e "$dir" ]; then
        local root=${SHOOTOUT_VENVS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venvs}
        real=$root/$(basename "$(dirname "$dir")")
        mkdir -p "$root"
        ln -sfn "$real" "$dir"
    fi
    if [ -x "$real/bin/python" ] && [ "$(cat "$real/.requirements" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    need_apt python3-venv python3-pip
    say "making $real (Debian's python3 + $want)"
    /usr/bin/python3 -m venv --system-site-packages "$real"
    "$real/bin/pip" install -q --disable-pip-version-check "$@"
    echo "$want" > "$real/.requirements"
}
