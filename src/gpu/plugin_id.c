/*
 * plugin_id.c - the GPU plug-in's handshake (base/plugin.h): which plug-in
 * and which build libaorta-gpu.so is, checked by the host before it calls
 * anything in it.
 */
#include "base/plugin.h"

AORTA_PLUGIN_ID(gpu);
