#!/usr/bin/env bash
# Back up a Yardstick site: the database, then the files (media, uploads, checkpoints: the shared
# folders, or the object store's copy when YARDSTICK_S3_BUCKET is set; model plug-ins), into a dated
# folder; keeps the newest few. Restore: docs/production.md, "Backups".
#
#   deploy/backup.sh [--env-file /etc/yardstick/web.env] [--dest /var/backups/yardstick] [--keep 14]
#
# The settings are those the web server reads (DATABASE_URL, MEDIA_ROOT, YARDSTICK_UPLOADS_ROOT,
# YARDSTICK_CHECKPOINT_DIR, YARDSTICK_MODELS_DIR, YARDSTICK_VAR_DIR, YARDSTICK_S3_*), from --env-file or from the
# environment (a variable already set wins over the file), with settings.py's defaults. Run it
# where the shared folders are mounted and the database is reachable, as root or the yardstick
# user, e.g. nightly from a systemd timer or cron. BACKUP_DIR and BACKUP_KEEP may replace --dest
# and --keep.
#
# Each backup is DEST/<UTC time>/: database.dump (pg_dump's custom format: pg_restore reads it,
# table by table if need be) or database.sqlite3 (the embedded SQLite, copied with SQLite's backup
# API), files/<folder>/ for each folder (rsync; a file unchanged since the previous backup is a hard
# link to it, so each backup is whole but costs only what changed) or <folder>.tar where rsync is
# missing, and MANIFEST (when, which code, what was copied). A backup is written under a .partial
# name and renamed when complete; only complete ones count towards --keep. The database is dumped
# first: every file it names is then in the copy (files added meanwhile are harmless extras).
set -euo pipefail
umask 077 # the dump holds password hashes and API tokens

root=$(cd "$(dirname "$0")/.." && pwd)
env_file='' dest=${BACKUP_DIR:-/var/backups/yardstick} keep=${BACKUP_KEEP:-14}
while [ $# -gt 0 ]; do
  case "$1" in
    --env-file) env_file=$2; shift 2 ;;
    --dest) dest=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "backup.sh: unknown argument $1 (--env-file FILE, --dest DIR, --keep N)" >&2; exit 2 ;;
  esac
done
case "$keep" in '' | *[!0-9]* | 0) echo "backup.sh: --keep needs a whole number of at least 1" >&2; exit 2 ;; esac

if [ -n "$env_file" ]; then
  # systemd's EnvironmentFile lines (NAME=value, "#" comments), read as data: nothing is executed.
  while IFS= read -r line || [ -n "$line" ]; do
    [[ "$line" =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
    name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then value=${BASH_REMATCH[1]}; fi
    [ -n "${!name+set}" ] || export "$name=$value"
  done <"$env_file"
fi

var_dir=${YARDSTICK_VAR_DIR:-$root/var}
folders=(
  "media=${MEDIA_ROOT:-$var_dir/media}"
  "uploads=${YARDSTICK_UPLOADS_ROOT:-$var_dir/uploads}"
  "checkpoints=${YARDSTICK_CHECKPOINT_DIR:-$var_dir/checkpoints}"
  "models=${YARDSTICK_MODELS_DIR:-$var_dir/models}"
)

mkdir -p "$dest"
dest=$(cd "$dest" && pwd) # rsync's --link-dest wants it absolute
stamp=$(date -u +%Y%m%dT%H%M%SZ)
partial="$dest/.partial-$stamp"
final="$dest/$stamp"
[ ! -e "$final" ] || { echo "backup.sh: $final exists already" >&2; exit 1; }
trap 'rm -rf "$partial"' EXIT
mkdir "$partial"
previous=$(find "$dest" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*Z' -printf '%f\n' | sort | tail -n 1)

{
  echo "started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "code $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
} >"$partial/MANIFEST"

database_url=${DATABASE_URL:-}
case "$database_url" in
  postgres://* | postgresql://*)
    # The password goes to pg_dump in PGPASSWORD, not on its command line (which `ps` shows).
    { read -r dbname && IFS= read -r password; } < <(
      python3 - "$database_url" <<'PY'
import sys
from urllib.parse import unquote, urlsplit
url = urlsplit(sys.argv[1])
if url.password is None:
    print(sys.argv[1])
    print("")
else:
    user, _, host = url.netloc.rpartition("@")
    print(url._replace(netloc=user.partition(":")[0] + "@" + host).geturl())
    print(unquote(url.password))
PY
    )
    [ -n "${dbname:-}" ] || { echo "backup.sh: could not read DATABASE_URL" >&2; exit 1; }
    PGPASSWORD=${password:-${PGPASSWORD:-}} pg_dump --format=custom --file="$partial/database.dump" --dbname="$dbname"
    pg_restore --list "$partial/database.dump" >/dev/null # readable, or the backup fails here
    echo "database database.dump ($(pg_dump --version))" >>"$partial/MANIFEST"
    ;;
  '')
    sqlite=${SQLITE_PATH:-$var_dir/yardstick.sqlite3}
    [ -f "$sqlite" ] || { echo "backup.sh: no DATABASE_URL and no SQLite file at $sqlite" >&2; exit 1; }
    python3 - "$sqlite" "$partial/database.sqlite3" <<'PY'
import sqlite3, sys
source, copy = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
with copy:
    source.backup(copy)
PY
    echo "database database.sqlite3" >>"$partial/MANIFEST"
    ;;
  *)
    echo "backup.sh: DATABASE_URL is neither postgres:// nor postgresql://; back the database up with its own tool" >&2
    exit 1
    ;;
esac

if [ -n "${YARDSTICK_S3_BUCKET:-}" ]; then
  # The files are in an object store: `manage.py copy_store export` brings a mirror of its three
  # prefixes up to date (only what changed is fetched), and the mirror is backed up as the folders
  # would be. Restore with `manage.py copy_store import`.
  mirror="$dest/store-mirror"
  python=${YARDSTICK_PYTHON:-$root/.venv/bin/python}
  (cd "$root" && "$python" manage.py copy_store export "$mirror") >>"$partial/MANIFEST"
  folders=(
    "media=$mirror/media"
    "uploads=$mirror/uploads"
    "checkpoints=$mirror/checkpoints"
    "models=${YARDSTICK_MODELS_DIR:-$var_dir/models}"
  )
  echo "store s3://$YARDSTICK_S3_BUCKET/${YARDSTICK_S3_PREFIX:+$YARDSTICK_S3_PREFIX/} via $mirror" >>"$partial/MANIFEST"
fi

for entry in "${folders[@]}"; do
  name=${entry%%=*} path=${entry#*=}
  if [ ! -d "$path" ]; then
    echo "folder $name $path missing, skipped" >>"$partial/MANIFEST"
    continue
  fi
  if command -v rsync >/dev/null; then
    mkdir -p "$partial/files"
    link=()
    [ -z "$previous" ] || [ ! -d "$dest/$previous/files/$name" ] || link=(--link-dest="$dest/$previous/files/$name")
    # The bucket's mirror: its files are replaced by rename, never rewritten, so the backup may
    # hard-link them too (the mirror and every backup then cost one copy of each file's version).
    case "$path" in "${mirror:-/nonexistent}"/*) link+=(--link-dest="$path") ;; esac
    rsync -a --delete "${link[@]}" "$path/" "$partial/files/$name/"
    echo "folder $name $path -> files/$name/" >>"$partial/MANIFEST"
  else
    tar -C "$path" -cf "$partial/$name.tar" .
    echo "folder $name $path -> $name.tar" >>"$partial/MANIFEST"
  fi
done

echo "finished $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$partial/MANIFEST"
mv "$partial" "$final"
trap - EXIT

# Retention: the newest $keep complete backups stay.
find "$dest" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*Z' -printf '%f\n' | sort -r | tail -n +"$((keep + 1))" |
  while IFS= read -r old; do rm -rf "${dest:?}/$old"; done
echo "$final"
