# Sourced by .ci/check-sync and .ci/check-replication: bringing notes-device databases to the
# hub's state. Uses the caller's $device (the notes-device binary), $work (the folder of the
# NAME.sqlite files), $url (the hub's /sync URL) and its `fail` function.

# sync_only NAME TOKEN: one `--sync-only` run of $work/NAME.sqlite (it synchronizes until
# nothing is pending and its last synchronization pulled nothing); prints its line and sets
# $moved to the rows it pushed plus pulled.
sync_only() {
  local output
  output="$("$device" --db "$work/$1.sqlite" --url "$url" --token "$2" --name "$1" --sync-only)" \
    || fail "$1 --sync-only failed: $output"
  echo "  $output"
  [[ "$output" =~ pushed\ ([0-9]+)\ pulled\ ([0-9]+).*pending\ 0 ]] || fail "$1 --sync-only printed: $output"
  moved=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
}

# converge NAME1 TOKEN1 NAME2 TOKEN2: `--sync-only` runs of the two devices in turn (1, 2, 1, …)
# until the last two runs, one of each, moved nothing; fails after 8 runs.
converge() {
  local quiet=0 runs=0
  while [ "$quiet" -lt 2 ] || [ "$runs" -lt 3 ]; do
    if [ $((runs % 2)) = 0 ]; then sync_only "$1" "$2"; else sync_only "$3" "$4"; fi
    runs=$((runs + 1))
    if [ "$moved" = 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ "$runs" -le 8 ] || fail "$1 and $3 still push or pull after $runs runs"
  done
}
