/*
 * html.h - the two pieces every self-contained aorta page needs
 * (`aorta report`'s index.html, `aorta sweep report`'s): text escaped for
 * HTML, and a file (a chart's PNG) written as base64 for a data: URI.
 * Both write to f; thread-compatible.
 */
#ifndef AORTA_REPORT_HTML_H
#define AORTA_REPORT_HTML_H

#include <stdio.h>

/* s with control characters, stray bytes and direction overrides made
 * visible (base/visible.h) and < > & " escaped; NULL writes nothing. */
void html_escape(FILE *f, const char *s);
/* The bytes of path as base64; -1 when it cannot be read (nothing else is
 * promised about what was written then). */
int html_base64_file(FILE *out, const char *path);

#endif
