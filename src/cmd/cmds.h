/*
 * cmds.h - every command's entry point; src/main.c holds the table.
 * A command returns an exit code (enum aorta_status values, docs/cli.md).
 */
#ifndef AORTA_CMDS_H
#define AORTA_CMDS_H

int cmd_analyze(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_hwq(int argc, char **argv);
int cmd_sdma(int argc, char **argv);
int cmd_tune_tp(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_env(int argc, char **argv);

#endif
