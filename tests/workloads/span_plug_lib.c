/* span_plug_lib.c: an instrumented plugin that calls into a library it
 * depends on (span_reload_lib.c built as libDEP.so), for the test of code
 * unloaded with its plugin (span_reload_dep.c).
 * Build: cc -O2 -g -fPIC -shared -finstrument-functions -DNAME=plugx -DDEP=depx \
 *        span_plug_lib.c -o libplugx.so -L. -ldepx -Wl,-rpath,'$ORIGIN'
 * (and plugy/depy: the same layout, other names) */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

void CAT(DEP, _entry)(int n);

void CAT(NAME, _entry)(int n)
{
	CAT(DEP, _entry)(n);
}
