#!/usr/bin/env bash
# trim_check.sh FULL_DIR TRIMMED_DIR - the analysis JSON of every run
# (CASE/base, CASE/slowed) is the same on the full traces and on the trimmed
# fixtures of tests/data/whatif (paths aside): the straggler fixtures' check
# one level deeper.
exec env TRIM_DEPTH=2 bash "$(dirname "$0")/../straggler/trim_check.sh" "$@"
