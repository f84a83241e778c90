/* placeholder: replaced by the hwq implementation */
#include <stdio.h>
#include "base/error.h"
#include "cmd/cmds.h"
int cmd_hwq(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "aorta: error: not built yet\n");
	return AORTA_EINTERNAL;
}
