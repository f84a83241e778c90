#!/usr/bin/env bash
# gen_docs.sh - the man pages and the bash completion, generated at build
# time from the option tables that generate -h, so they cannot drift.
#   bash scripts/gen_docs.sh AORTA MANDIR COMPLETION_FILE
# AORTA is the built binary; its hidden `aorta help --man CMD [VERB]` prints
# a command's (or a verb's) option table as man page sections and `aorta
# help --options CMD [VERB]` its option names; `aorta help --man aorta` the
# command table.  Commands with verbs (hwq, sweep) list them under
# "verbs:" in their -h; each verb gets its own section of the command's page.
# Writes MANDIR/aorta.1, MANDIR/aorta-CMD.1 for every command, and the
# completion script (bash: `complete -F _aorta aorta`).  Each file is
# written to a temporary name and renamed.
set -euo pipefail
A=$1 MAN=$2 COMP=$3
mkdir -p "$MAN" "$(dirname "$COMP")"
ver=$("$A" --version | awk '{ print $2 }')
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d)
mapfile -t cmds < <("$A" help --man aorta)

roff() { sed 's/\\/\\e/g; s/^\([.'"'"']\)/\\\&\1/'; }
verbs_of() { # the verbs a command's -h lists, if any
	"$A" "$1" -h 2>/dev/null | awk '/^verbs:/ { v = 1; next } v && /^$/ { exit } v { print $1 }'
}
# docs/cli.md is the one text of what each command prints and why it exits
# as it does: a command's "### Output" and "### Exit status" become its man
# page's OUTPUT and EXIT STATUS, "## The summary" the SUMMARY of analyze,
# compare and report, "## Exit codes" aorta(1)'s, as roff: paragraphs,
# table rows as tagged paragraphs, `code` and **bold** in bold.
DOC=$(dirname "$0")/../docs/cli.md
md_section() { # HEADING [PARENT]: the lines under HEADING (inside PARENT's section) to the next heading
	awk -v h="$1" -v parent="${2:-}" '
		parent != "" && $0 == parent { inp = 1; next }
		parent != "" && inp && /^## / { inp = 0 }
		(parent == "" || inp) && $0 == h { p = 1; next }
		p && /^##/ { exit }
		p { print }' "$DOC"
}
md_roff() { # markdown paragraphs and tables on stdin -> roff
	awk '
		function inline(t) {
			gsub(/\\/, "\\e", t)
			while (match(t, /\*\*[^*]+\*\*/))
				t = substr(t, 1, RSTART - 1) "\\fB" substr(t, RSTART + 2, RLENGTH - 4) "\\fR" substr(t, RSTART + RLENGTH)
			while (match(t, /`[^`]+`/))
				t = substr(t, 1, RSTART - 1) "\\fB" substr(t, RSTART + 1, RLENGTH - 2) "\\fR" substr(t, RSTART + RLENGTH)
			gsub(/-/, "\\-", t)
			if (t ~ /^[.\047]/)
				t = "\\&" t
			return t
		}
		/^\| *[-:| ]+\|$/ { next }
		/^\|/ {
			n = split($0, c, "|")
			if (!header++)
				next
			tag = c[2]
			gsub(/^ +| +$/, "", tag)
			txt = ""
			for (k = 3; k < n; k++)
				txt = txt (k > 3 ? " | " : "") c[k]
			gsub(/^ +| +$/, "", txt)
			printf ".TP\n%s\n%s\n", inline(tag), inline(txt)
			para = 1
			next
		}
		/^$/ { if (para) print ".PP"; para = 0; header = 0; next }
		/^```/ { next }
		{ print inline($0); para = 1 }'
}
exit_status() { # [CMD]: the command's exit status from docs/cli.md, else the table every command shares
	local t=""
	[ -n "${1:-}" ] && t=$(md_section "### Exit status" "## aorta $1")
	echo ".SH EXIT STATUS"
	if [ -n "$t" ]; then
		printf '%s\n' "$t" | md_roff
	else
		md_section "## Exit codes" | md_roff
	fi
}
output_of() { # CMD: OUTPUT, and SUMMARY for the commands that lead with it
	local t
	t=$(md_section "### Output" "## aorta $1")
	if [ -n "$t" ]; then
		echo ".SH OUTPUT"
		printf '%s\n' "$t" | md_roff
	fi
	case $1 in
	analyze | compare | report)
		echo ".SH SUMMARY"
		md_section "## The summary" | md_roff
		;;
	esac
}

# ---- aorta(1) ----------------------------------------------------------------
{
	echo ".TH AORTA 1 \"$date\" \"aorta $ver\" \"aorta manual\""
	echo ".SH NAME"
	echo "aorta \\- why distributed GPU training does not overlap computation with communication"
	echo ".SH SYNOPSIS"
	echo ".B aorta"
	echo "\\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIargs\\fR]"
	echo ".SH COMMANDS"
	for c in "${cmds[@]}"; do
		printf '.TP\n\\fBaorta-%s\\fR(1)\n' "${c%%$'\t'*}"
		printf '%s\n' "${c#*$'\t'}" | roff
	done
	echo ".PP"
	echo "\\fBaorta\\fR \\fICOMMAND\\fR \\fB\\-h\\fR shows a command's options; \\fBaorta \\-\\-version\\fR the version."
	exit_status
	echo ".SH SEE ALSO"
	for c in "${cmds[@]}"; do printf '\\fBaorta-%s\\fR(1)\n' "${c%%$'\t'*}"; done | paste -sd, - | sed 's/,/, /g'
} > "$MAN/aorta.1.tmp"
mv "$MAN/aorta.1.tmp" "$MAN/aorta.1"

# ---- aorta-CMD(1) --------------------------------------------------------------
for c in "${cmds[@]}"; do
	name=${c%%$'\t'*} summary=${c#*$'\t'}
	up=$(echo "aorta-$name" | tr a-z A-Z)
	mapfile -t verbs < <(verbs_of "$name")
	{
		echo ".TH $up 1 \"$date\" \"aorta $ver\" \"aorta manual\""
		echo ".SH NAME"
		printf 'aorta\\-%s \\- %s\n' "$name" "$(printf '%s' "$summary" | roff)"
		if [ ${#verbs[@]} -eq 0 ]; then
			"$A" help --man "$name"
		else
			# the command's own -h (its verbs), then one section per verb
			echo ".SH DESCRIPTION"
			echo ".nf"
			"$A" "$name" -h | roff
			echo ".fi"
			for v in "${verbs[@]}"; do
				echo ".SH \"aorta $name $v\""
				"$A" help --man "$name" "$v" | sed 's/^\.SH \(.*\)/.SS "\1"/'
			done
		fi
		output_of "$name"
		exit_status "$name"
		echo ".SH SEE ALSO"
		echo "\\fBaorta\\fR(1)"
	} > "$MAN/aorta-$name.1.tmp"
	mv "$MAN/aorta-$name.1.tmp" "$MAN/aorta-$name.1"
done

# ---- bash completion -------------------------------------------------------------
words() { "$A" help --options "$@" | paste -sd' ' -; }
{
	echo "# bash completion for aorta: generated by scripts/gen_docs.sh from the"
	echo "# option tables that generate 'aorta COMMAND -h' (aorta $ver)."
	echo "_aorta() {"
	echo "	local cur=\${COMP_WORDS[COMP_CWORD]} cmd= verb= i w opts= subs="
	echo "	for ((i = 1; i < COMP_CWORD; i++)); do"
	echo "		w=\${COMP_WORDS[i]}"
	echo "		case \$w in -*) continue ;; esac"
	echo "		if [ -z \"\$cmd\" ]; then cmd=\$w; elif [ -z \"\$verb\" ]; then verb=\$w; fi"
	echo "	done"
	echo "	# opts: the options of the command (or verb) being typed; subs: the"
	echo "	# commands or verbs that may come next"
	echo "	case \$cmd in"
	printf '\t"") opts="-h --help --version" subs="%s" ;;\n' "$(printf '%s\n' "${cmds[@]}" | cut -f1 | paste -sd' ' -)"
	for c in "${cmds[@]}"; do
		name=${c%%$'\t'*}
		mapfile -t verbs < <(verbs_of "$name")
		if [ ${#verbs[@]} -eq 0 ]; then
			printf '\t%s) opts="%s" ;;\n' "$name" "$(words "$name")"
		else
			printf '\t%s)\n\t\tcase $verb in\n' "$name"
			printf '\t\t"") opts="-h --help" subs="%s" ;;\n' "${verbs[*]}"
			for v in "${verbs[@]}"; do
				printf '\t\t%s) opts="%s" ;;\n' "$v" "$(words "$name" "$v")"
			done
			printf '\t\tesac ;;\n'
		fi
	done
	echo "	esac"
	echo "	if [[ \$cur == -* ]]; then"
	echo "		COMPREPLY=(\$(compgen -W \"\$opts\" -- \"\$cur\"))"
	echo "	elif [ -n \"\$subs\" ]; then"
	echo "		COMPREPLY=(\$(compgen -W \"\$subs\" -- \"\$cur\"))"
	echo "	fi"
	echo "}"
	echo "complete -o default -o bashdefault -F _aorta aorta"
} > "$COMP.tmp"
mv "$COMP.tmp" "$COMP"
