/*
 * peer_rules.h - classes per span as the peer tools define them, for their
 * named figures (docs/metrics.md): Holistic Trace Analysis 0.6.1
 * (hta/common/types.py, utils.get_kernel_type) and TraceLens
 * (gpu_event_analyser.py).  The caller frees the returned array (t->n
 * classes, enum span_class).  Thread-safe.
 */
#ifndef AORTA_PEER_RULES_H
#define AORTA_PEER_RULES_H

#include <stdint.h>

#include "timeline/timeline.h"

uint8_t *classes_hta(const struct trace *t);
uint8_t *classes_tracelens(const struct trace *t);

#endif
