#!/usr/bin/env bash
# Make `snakemake --profile slurm` and `--profile local` work from the repository root (and
# anywhere else): Snakemake looks a bare profile name up in the working directory, then in the
# user config folder ($XDG_CONFIG_HOME/snakemake, default ~/.config/snakemake), never in profiles/.
# This links <user config>/snakemake/<name> to this checkout's profiles/<name>. A profile of that
# name that points elsewhere is left alone (with a warning): pass the path then
# (`--profile profiles/slurm`), which always works. Idempotent.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
target_dir="${XDG_CONFIG_HOME:-$HOME/.config}/snakemake"
mkdir -p "$target_dir"
for name in slurm local; do
  link="$target_dir/$name"
  want="$repo/profiles/$name"
  if [ -L "$link" ] && [ "$(readlink "$link")" = "$want" ]; then
    continue
  fi
  if [ -e "$link" ] || [ -L "$link" ]; then
    echo "install_profiles: $link exists and is not this checkout's profile; use --profile profiles/$name" >&2
    continue
  fi
  ln -s "$want" "$link"
  echo "install_profiles: --profile $name -> $want"
done
