#!/usr/bin/env bash
# Sourced by scripts/env.sh: repair_venv VENV makes a moved or copied checkout's environment name its own folder. A
# venv writes its absolute path into bin/activate* (VIRTUAL_ENV) and into the first line of its scripts (pip, jupyter,
# ...); after a move they name the old folder, so `source .venv/bin/activate` gave the old environment. Only text
# files under VENV/bin whose content names the old path are rewritten; the interpreter itself is a link and moves.
repair_venv() {
  local venv="$1" old line
  [ -f "$venv/bin/activate" ] || return 0
  line="$(grep -m1 '^VIRTUAL_ENV=' "$venv/bin/activate" || true)"
  old="${line#VIRTUAL_ENV=}"; old="${old//\"/}"; old="${old//\'/}"
  [ -n "$old" ] && [ "$old" != "$venv" ] || return 0
  echo ">> .venv was made at $old: pointing its activate scripts and its tools at $venv"
  local f
  for f in "$venv"/bin/*; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    if grep -Iq -- "$old" "$f" 2>/dev/null; then
      sed -i "s|$old|$venv|g" "$f"
    fi
  done
}
