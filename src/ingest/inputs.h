/*
 * inputs.h - from command-line inputs to the list of files to read: the one
 * folder / glob / @list rule of every command (analyze, report, compare).
 *
 * An input is a file (read as given, whatever it holds: a FIFO, `-` for
 * standard input and `<(zcat x.gz)` work, their format is sniffed from the
 * bytes the reader reads), a directory (walked, each regular file sniffed
 * once from its first 64 KiB and the format carried to the reader), a glob
 * (each match as if named), or @LIST (one path per line, '#' comments).
 *
 * In a directory a file that is not a trace is skipped and the skip is said:
 * a warning naming the file and the reason when it looks like a rank's trace
 * (a trace's extension: .json, .json.gz, .jsonl, .sqlite, .db, ...), a note otherwise.  aorta's own
 * outputs (analyze --json / --trace-out / --csv, report's files) and its
 * temporary files are skipped with a note.  When a directory holds device
 * traces and aorta metrics JSONL, the traces are read and the choice is
 * printed.  With strict set, a warning-level skip is an error (exit 3).
 *
 * One walk, one visit per file and per folder: folders are entered once by
 * (device, inode), so a symlinked folder (`ln -s . d/loop`) or a folder named
 * twice adds nothing and cannot loop; a regular file reached under two names
 * (a link `latest.json -> rank3.json`, a folder and its member both named)
 * is read once, under its real name, with a warning.  Every file kept is
 * declared an input to the output guard (base/output.h).  Running out of
 * descriptors or memory while walking (EMFILE, ENFILE, ENOMEM) is
 * AORTA_EINTERNAL (exit 5) with the errno, never a skip.
 *
 * Thread safety: none needed (runs before the readers).  The list owns its
 * strings; inputs_release frees them.
 */
#ifndef AORTA_INPUTS_H
#define AORTA_INPUTS_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "ingest/ingest.h"

struct input {
	char *path;
	enum trace_format format; /* FMT_UNKNOWN: sniffed when read */
	struct zread *z;          /* a named input the caller opened and sniffed already (its to close),
	                           * read from there; else NULL (the reader opens path) */
	dev_t dev;                /* identity of a regular file (have_id), */
	ino_t ino;                /* so one file under two names is read once */
	int have_id, is_link;
};

struct input_list {
	struct input *v;
	size_t n, cap;
	size_t skipped;           /* files of directories skipped with a warning */
};

enum aorta_status inputs_expand(char *const *args, size_t n, int strict,
				struct input_list *out, struct aorta_error *e);
void inputs_release(struct input_list *l);

/* Rank from a file name ("rank3", "rank_03", "rank-3") or a parent
 * directory named rankN, -1 if none. */
int rank_from_name(const char *path);
/* Set by a command that reads a folder's rank_*_metrics.jsonl itself where
 * the walk reads the traces beside them (report: upstream's keys): the
 * walk then does not call those files left out. */
extern int inputs_upstream_jsonl_read;

/* Whether the first bytes of a file (NUL-terminated) are one of aorta's own
 * outputs; returns what it is ("an aorta analysis (analyze --json)") or NULL. */
const char *inputs_own_output(const char *buf, size_t len);

#endif
