/*
 * recipe.h - a sweep recipe (recipe.c): the YAML read, checked and expanded into
 * cells, every error naming the recipe line (docs/sweep.md).
 *
 * Ownership: a struct recipe owns every string it points to (recipe_free).
 */
#ifndef AORTA_SWEEP_RECIPE_H
#define AORTA_SWEEP_RECIPE_H

#include <stddef.h>
#include <stdio.h>
#include "base/error.h"

/* ---- recipe ------------------------------------------------------------------- */

enum axis_kind {
	AX_ENVIRONMENT, /* the named environments (axis "environment") */
	AX_ENV,         /* environment variables (targets: their names) */
	AX_OVERRIDE,    /* aorta train keys (targets: dotted keys) */
};

struct sweep_axis {
	char *name;
	int line;
	enum axis_kind kind;
	char **targets;          /* what a value sets (a tied axis sets several) */
	size_t ntargets;
	char **values;
	int *value_lines;
	size_t nvalues;
};

struct sweep_environment {
	char *name;
	int line;
	char **keys, **vals;     /* variables, values with ${VAR} expanded */
	size_t n;
};

struct sweep_cell {
	char id[16];             /* "c01": its folder under cells/ */
	char *key;               /* "axis=value axis=value" in axis order: its identity */
	char *label;             /* the same without the axis names of single-value axes */
	int line;                /* recipe line of an explicit cell, else 0 */
	size_t *vi;              /* value index per axis */
};

struct recipe {
	char path[512];
	char *name;
	int trials;
	double timeout_s;
	int skip_steps;
	double threshold_pct;    /* smallest difference that counts, % of the baseline median */
	double noisy_pct;        /* a cell whose trial range exceeds this % of its median is noisy */
	int confound;            /* re-run the baseline at the end (default 1) */
	size_t baseline;         /* cell index */
	struct sweep_axis *axes;
	size_t naxes;
	struct sweep_environment *envs;
	size_t nenvs;
	char **env_k, **env_v;   /* variables set in every cell */
	size_t nenv;
	char **overrides;        /* "key=value" for every cell (aorta train) */
	size_t noverrides;
	char *train_config;      /* aorta train --config, NULL: its default */
	char **train_args;
	size_t ntrain_args;
	char **command;          /* the workload; NULL/0: aorta train */
	size_t ncommand;
	char *traces;            /* folder analysed, "{out}" unless the recipe names one */
	char *report_rows, *report_cols; /* heatmap axes, NULL: the first two with >= 2 values */
	int explicit_cells;
	struct sweep_cell *cells;
	size_t ncells;
};

/* Reads and expands path.  cli_command (ncli words, may be 0) replaces the
 * recipe's workload command; trials > 0 replaces its trials.  With
 * check_train, every cell's aorta train overrides are validated against
 * the train configuration (`--check-config` semantics).  Every error names
 * the recipe file and line; statuses AORTA_EINPUT (recipe) or AORTA_EUSAGE.
 * On error *r holds nothing to free. */
enum aorta_status recipe_load(const char *path, char *const *cli_command, size_t ncli, int trials,
			      int check_train, struct recipe *r, struct aorta_error *e);
enum aorta_status recipe_parse_text(const char *name, const char *text, struct recipe *r,
				    struct aorta_error *e); /* for tests: no CLI, no train check */
void recipe_free(struct recipe *r);

/* The environment name of a cell, or NULL when the recipe names none. */
const char *recipe_cell_environment(const struct recipe *r, const struct sweep_cell *c);
/* As recipe_subst, each value single-quoted for sh (a ' inside becomes
 * '\''): for the script of a `sh -c` command, where an axis value with a
 * space, ; or $ must stay one word and never run. */
char *recipe_subst_sh(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		      const char *trial);
/* Replaces {out}, {cell}, {trial} and {AXIS} in s (caller frees). */
char *recipe_subst(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		   const char *trial);
/* The aorta train overrides of a cell, fixed ones first: an array of n
 * "key=value" (caller frees the array, and the strings it adds to owned). */
const char **recipe_cell_overrides(const struct recipe *r, const struct sweep_cell *c, size_t *n, char ***owned,
				   size_t *nowned);
/* Writes the expanded recipe (explicit cells) as YAML that replays it. */
int recipe_write_resolved(FILE *f, const struct recipe *r);

#endif
