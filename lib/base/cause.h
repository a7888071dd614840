/* cause.h: how lib/ hands an error message back: a malloc'd line in
 * *cause (caller frees; cause may be NULL when nobody wants it), lowercase,
 * no full stop, the subject quoted, e.g. "cannot write 'x.json': Permission
 * denied".  Every lib/ file builds its messages through cause_set(). */
#ifndef SPANSTAT_CAUSE_H
#define SPANSTAT_CAUSE_H

/* Formats the message into *cause and returns ret (a -errno). */
int cause_set(char **cause, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
