/* diffcmd.h: the diff subcommand (diffcmd.c). */
#ifndef SPANSTAT_DIFFCMD_H
#define SPANSTAT_DIFFCMD_H

/* argv[0] is "diff"; returns the exit status. */
int diff_main(int argc, char **argv);

#endif
