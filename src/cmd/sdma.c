/* placeholder: replaced by the sdma implementation */
#include <stdio.h>
#include "base/error.h"
#include "cmd/cmds.h"
int cmd_sdma(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "aorta: error: not built yet\n");
	return AORTA_EINTERNAL;
}
