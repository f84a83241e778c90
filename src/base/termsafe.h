/*
 * termsafe.h - standard output and error that show text from inputs as
 * text: kernel names, labels, paths and verdicts a trace or a file brings
 * reach the terminal (or a log read on one later) through them, and an
 * escape sequence among them (one that clears the screen, sets the window
 * title, writes the clipboard) is printed as visible escapes
 * (base/visible.h), never sent to the terminal.
 */
#ifndef AORTA_TERMSAFE_H
#define AORTA_TERMSAFE_H

/* Replaces stdout and stderr with streams that write through the escaper
 * to descriptors 1 and 2 (stdout buffered as before: by line on a
 * terminal, else fully; stderr unbuffered).  Called once by main, before
 * anything is printed.  Data written to /dev/stdout or /dev/fd/1 as an
 * output file (analyze --json /dev/stdout) goes to the descriptor itself,
 * unchanged. */
void termsafe_streams(void);

#endif
