/* _spanstat.c: the C part of the spanstat Python module: the fast path of
 * spanstat.begin/end (straight into libspanstat's spanstat_begin_text and
 * spanstat_end_text, found with dlsym when spanstat preloaded the library)
 * and the profiler of --python, a C profile function (PyEval_SetProfile)
 * that makes every Python function call a span.
 *
 * The profiler names a call module.qualname, followed by the byte 0x1f and
 * file:line (spanstat(3), Names by text): the decoder shows the name and
 * gives JSON the location.  A code object's name is made once, on its first
 * call, interned (one copy per distinct text, kept for the life of the
 * process, so that its address names it in the recorder: no hashing per
 * call) and found again through the code object's extra slot, which dies with
 * the code object, so a freed and reused code object never shows a stale
 * name.  C functions (with profile(c_calls=True)) are named by their
 * module and qualified name, cached by their PyMethodDef.
 *
 * Each thread's open calls are a stack in its profile object (the per-thread
 * argument of PyEval_SetProfile): a return ends the innermost, a return with
 * nothing open (the frames that were running when the profiler started) is
 * ignored, and a fork child begins the stack again (after_fork), since its
 * recorder starts empty.  Everything runs with the GIL held. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030C0000
#define SP_GET_EXTRA PyUnstable_Code_GetExtra
#define SP_SET_EXTRA PyUnstable_Code_SetExtra
#define SP_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#else
#define SP_GET_EXTRA _PyCode_GetExtra
#define SP_SET_EXTRA _PyCode_SetExtra
#define SP_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#endif

#if PY_VERSION_HEX < 0x03090000
static PyCodeObject *PyFrame_GetCode(PyFrameObject *frame)
{
	Py_INCREF(frame->f_code);
	return frame->f_code;
}
#endif

typedef void (*sp_text_fn)(const char *, size_t);
typedef void (*sp_name_fn)(const char *);

static sp_text_fn sp_begin_text, sp_end_text;
static sp_name_fn sp_begin, sp_end;
/* spanstat_arg_*: NULL in a library without them */
static void (*sp_arg_i64)(const char *, int64_t);
static void (*sp_arg_u64)(const char *, uint64_t);
static void (*sp_arg_f64)(const char *, double);
static void (*sp_arg_bool)(const char *, int);
static void (*sp_arg_str)(const char *, const char *, size_t);
static const int *sp_on; /* libspanstat's spanstat_on_: collecting */
static int sp_off_dummy;

/* ---- interned names ------------------------------------------------------ */

/* A name's text, NUL-terminated, at a fixed address for the life of the
 * process. */
struct sp_name {
	uint64_t hash;
	size_t len;
	char text[];
};

static struct sp_name **sp_names; /* open addressing, power-of-two size */
static size_t sp_nnames, sp_cap;

static uint64_t sp_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The kept copy of text, NULL when out of memory. */
static const struct sp_name *sp_intern(const char *text, size_t len)
{
	uint64_t h = sp_hash(text, len);
	if (2 * (sp_nnames + 1) > sp_cap) {
		size_t cap = sp_cap ? 2 * sp_cap : 1024;
		struct sp_name **t = PyMem_RawCalloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < sp_cap; i++) {
			if (!sp_names[i])
				continue;
			size_t j = sp_names[i]->hash & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = sp_names[i];
		}
		PyMem_RawFree(sp_names);
		sp_names = t;
		sp_cap = cap;
	}
	size_t j = h & (sp_cap - 1);
	for (; sp_names[j]; j = (j + 1) & (sp_cap - 1))
		if (sp_names[j]->hash == h && sp_names[j]->len == len &&
		    memcmp(sp_names[j]->text, text, len) == 0)
			return sp_names[j];
	struct sp_name *n = PyMem_RawMalloc(sizeof *n + len + 1);
	if (!n)
		return NULL;
	n->hash = h;
	n->len = len;
	memcpy(n->text, text, len);
	n->text[len] = '\0';
	sp_names[j] = n;
	sp_nnames++;
	return n;
}

/* ---- the names of code objects and C functions --------------------------- */

static Py_ssize_t sp_code_index = -1;

/* module.qualname 0x1f file:line of the code running in frame. */
static const struct sp_name *sp_code_make(PyFrameObject *frame, PyCodeObject *co)
{
#if PY_VERSION_HEX >= 0x030B0000
	PyObject *globals = PyFrame_GetGlobals(frame);
#else
	PyObject *globals = frame->f_globals;
	Py_XINCREF(globals);
#endif
	PyObject *mod = globals ? PyDict_GetItemString(globals, "__name__") : NULL;
	const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
#if PY_VERSION_HEX >= 0x030B0000
	PyObject *qual = co->co_qualname;
#else
	PyObject *qual = co->co_name;
#endif
	const char *q = qual && PyUnicode_Check(qual) ? PyUnicode_AsUTF8(qual) : NULL;
	const char *f = co->co_filename && PyUnicode_Check(co->co_filename)
				? PyUnicode_AsUTF8(co->co_filename)
				: NULL;
	PyErr_Clear();
	PyObject *s = PyUnicode_FromFormat("%s%s%s\x1f%s:%d", m ? m : "", m ? "." : "", q ? q : "?",
					   f ? f : "?", co->co_firstlineno);
	Py_XDECREF(globals);
	if (!s) {
		PyErr_Clear();
		return NULL;
	}
	Py_ssize_t n;
	const char *t = PyUnicode_AsUTF8AndSize(s, &n);
	const struct sp_name *name = t ? sp_intern(t, (size_t)n) : NULL;
	Py_DECREF(s);
	PyErr_Clear();
	return name;
}

static const struct sp_name *sp_code_name(PyFrameObject *frame)
{
	PyCodeObject *co = PyFrame_GetCode(frame);
	void *extra = NULL;
	if (SP_GET_EXTRA((PyObject *)co, sp_code_index, &extra) < 0) {
		PyErr_Clear();
		extra = NULL;
	}
	if (!extra) {
		extra = (void *)sp_code_make(frame, co);
		if (extra && SP_SET_EXTRA((PyObject *)co, sp_code_index, extra) < 0)
			PyErr_Clear();
	}
	Py_DECREF(co);
	return extra;
}

/* C functions, by their PyMethodDef (static in the modules that define
 * them): a small table that only grows. */
struct sp_cfunc {
	const PyMethodDef *def;
	const void *self_type;
	const struct sp_name *name;
};
static struct sp_cfunc *sp_cfuncs;
static size_t sp_ncf, sp_cfcap;

/* The type in t's MRO whose methods hold def, NULL if none does. */
static PyTypeObject *sp_cfunc_owner(PyTypeObject *t, const PyMethodDef *def)
{
	PyObject *mro = t->tp_mro;
	if (!mro || !PyTuple_Check(mro))
		return NULL;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *o = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		for (const PyMethodDef *m = o->tp_methods; m && m->ml_name; m++)
			if (m == def)
				return o;
	}
	return NULL;
}

/* A method is named by the type that defines it (builtins.dict.get, on a
 * dict subclass too), as cProfile does: the name stays true for every
 * caller of def, which is what the table below is keyed by. */
static const struct sp_name *sp_cfunc_make(PyObject *fn)
{
	PyCFunctionObject *cf = (PyCFunctionObject *)fn;
	PyObject *self = cf->m_self;
	PyTypeObject *owner = NULL;
	if (self && !PyModule_Check(self)) {
		owner = sp_cfunc_owner(Py_TYPE(self), cf->m_ml);
		if (!owner && PyType_Check(self)) /* a class method */
			owner = sp_cfunc_owner((PyTypeObject *)self, cf->m_ml);
	}
	PyObject *mod = NULL, *qual = NULL;
	if (owner) {
		mod = PyObject_GetAttrString((PyObject *)owner, "__module__");
		PyObject *oq = PyObject_GetAttrString((PyObject *)owner, "__qualname__");
		if (oq && PyUnicode_Check(oq))
			qual = PyUnicode_FromFormat("%U.%s", oq, cf->m_ml->ml_name);
		Py_XDECREF(oq);
	} else {
		qual = PyObject_GetAttrString(fn, "__qualname__");
		if (cf->m_module && PyUnicode_Check(cf->m_module)) {
			mod = cf->m_module;
			Py_INCREF(mod);
		} else if (self && !PyModule_Check(self)) {
			mod = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "__module__");
		} else if (self) {
			mod = PyModule_GetNameObject(self);
		}
	}
	PyErr_Clear();
	const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
	const char *q = qual && PyUnicode_Check(qual) ? PyUnicode_AsUTF8(qual) : cf->m_ml->ml_name;
	PyErr_Clear();
	char buf[512];
	int n = snprintf(buf, sizeof buf, "%s%s%s", m ? m : "", m ? "." : "", q ? q : "?");
	Py_XDECREF(mod);
	Py_XDECREF(qual);
	if (n < 0)
		return NULL;
	return sp_intern(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static const struct sp_name *sp_cfunc_name(PyObject *fn)
{
	if (!PyCFunction_Check(fn))
		return NULL;
	PyCFunctionObject *cf = (PyCFunctionObject *)fn;
	const void *st = NULL; /* by def alone: a type's address may be reused */
	size_t mask = sp_cfcap - 1;
	if (sp_cfcap) {
		size_t j = (((uintptr_t)cf->m_ml >> 4) ^ (uintptr_t)st) & mask;
		for (; sp_cfuncs[j].def; j = (j + 1) & mask)
			if (sp_cfuncs[j].def == cf->m_ml && sp_cfuncs[j].self_type == st)
				return sp_cfuncs[j].name;
	}
	const struct sp_name *name = sp_cfunc_make(fn);
	if (!name)
		return NULL;
	if (2 * (sp_ncf + 1) > sp_cfcap) {
		size_t cap = sp_cfcap ? 2 * sp_cfcap : 256;
		struct sp_cfunc *t = PyMem_RawCalloc(cap, sizeof *t);
		if (!t)
			return name;
		for (size_t i = 0; i < sp_cfcap; i++) {
			if (!sp_cfuncs[i].def)
				continue;
			size_t j = (((uintptr_t)sp_cfuncs[i].def >> 4) ^
				    (uintptr_t)sp_cfuncs[i].self_type) &
				   (cap - 1);
			while (t[j].def)
				j = (j + 1) & (cap - 1);
			t[j] = sp_cfuncs[i];
		}
		PyMem_RawFree(sp_cfuncs);
		sp_cfuncs = t;
		sp_cfcap = cap;
		mask = cap - 1;
	}
	size_t j = (((uintptr_t)cf->m_ml >> 4) ^ (uintptr_t)st) & mask;
	while (sp_cfuncs[j].def)
		j = (j + 1) & mask;
	sp_cfuncs[j] = (struct sp_cfunc){cf->m_ml, st, name};
	sp_ncf++;
	return name;
}

/* ---- a thread's profile object: its open calls --------------------------- */

typedef struct {
	PyObject_HEAD const struct sp_name **stk;
	unsigned depth, cap;
	int c_calls;
} sp_stack;

static void sp_stack_dealloc(PyObject *o)
{
	PyMem_RawFree(((sp_stack *)o)->stk);
	Py_TYPE(o)->tp_free(o);
}

static PyTypeObject sp_stack_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_spanstat.Stack",
	.tp_basicsize = sizeof(sp_stack),
	.tp_dealloc = sp_stack_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
};

static inline void sp_push(sp_stack *s, const struct sp_name *name)
{
	if (s->depth >= s->cap) { /* past it too: a push that found no room */
		unsigned cap = s->cap ? 2 * s->cap : 64;
		while (cap <= s->depth)
			cap *= 2;
		const struct sp_name **t = PyMem_RawRealloc(s->stk, cap * sizeof *t);
		if (!t) { /* no room: the call is not a span, and its return pops nothing */
			s->depth++;
			return;
		}
		for (unsigned i = s->cap; i < s->depth; i++)
			t[i] = NULL; /* the pushes that found no room: not spans */
		s->stk = t;
		s->cap = cap;
	}
	s->stk[s->depth++] = name;
	if (name)
		sp_begin(name->text);
}

static inline void sp_pop(sp_stack *s)
{
	if (!s->depth)
		return; /* a frame that ran before the profiler started */
	s->depth--;
	if (s->depth < s->cap && s->stk[s->depth])
		sp_end(s->stk[s->depth]->text);
}

static int sp_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	sp_stack *s = (sp_stack *)obj;
	switch (what) {
	case PyTrace_CALL:
		sp_push(s, sp_code_name(frame));
		break;
	case PyTrace_RETURN:
		sp_pop(s);
		break;
	case PyTrace_C_CALL:
		if (s->c_calls)
			sp_push(s, sp_cfunc_name(arg));
		break;
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		if (s->c_calls)
			sp_pop(s);
		break;
	}
	return 0;
}

static int sp_c_calls; /* what profile() asked, for the threads to come */

/* Installs the profiler in the calling thread. */
static int sp_install(void)
{
	sp_stack *s = PyObject_New(sp_stack, &sp_stack_type);
	if (!s)
		return -1;
	s->stk = NULL;
	s->depth = s->cap = 0;
	s->c_calls = sp_c_calls;
	PyEval_SetProfile(sp_profile, (PyObject *)s);
	Py_DECREF(s);
	return 0;
}

/* ---- the module's functions ---------------------------------------------- */

static int sp_lookup(void)
{
	if (sp_begin)
		return 1;
	sp_text_fn bt = (sp_text_fn)dlsym(RTLD_DEFAULT, "spanstat_begin_text");
	sp_text_fn et = (sp_text_fn)dlsym(RTLD_DEFAULT, "spanstat_end_text");
	sp_name_fn b = (sp_name_fn)dlsym(RTLD_DEFAULT, "spanstat_begin");
	sp_name_fn e = (sp_name_fn)dlsym(RTLD_DEFAULT, "spanstat_end");
	const int *on = dlsym(RTLD_DEFAULT, "spanstat_on_");
	if (!bt || !et || !b || !e || !on)
		return 0;
	sp_begin_text = bt;
	sp_end_text = et;
	*(void **)&sp_arg_i64 = dlsym(RTLD_DEFAULT, "spanstat_arg_i64");
	*(void **)&sp_arg_u64 = dlsym(RTLD_DEFAULT, "spanstat_arg_u64");
	*(void **)&sp_arg_f64 = dlsym(RTLD_DEFAULT, "spanstat_arg_f64");
	*(void **)&sp_arg_bool = dlsym(RTLD_DEFAULT, "spanstat_arg_bool");
	*(void **)&sp_arg_str = dlsym(RTLD_DEFAULT, "spanstat_arg_str");
	sp_end = e;
	sp_on = on;
	sp_begin = b;
	return 1;
}

PyDoc_STRVAR(sp_available_doc, "available() -> bool: libspanstat is loaded and collects spans");
static PyObject *sp_available(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyBool_FromLong(sp_lookup() && *sp_on);
}

static inline const char *sp_text_utf8(PyObject *name, Py_ssize_t *n, PyObject **tmp)
{
	*tmp = NULL;
	if (!PyUnicode_Check(name)) {
		if (!(*tmp = name = PyObject_Str(name)))
			return NULL;
	}
	const char *t = PyUnicode_AsUTF8AndSize(name, n);
	if (t)
		return t;
	/* lone surrogates (os.fsdecode of bytes that are not UTF-8): their
	 * bytes back, as the line protocol writes them (surrogateescape), and
	 * the others replaced: a name never raises */
	PyErr_Clear();
	PyObject *b = PyUnicode_AsEncodedString(name, "utf-8", "surrogateescape");
	if (!b) {
		PyErr_Clear();
		b = PyUnicode_AsEncodedString(name, "utf-8", "replace");
	}
	Py_XDECREF(*tmp);
	if (!(*tmp = b))
		return NULL;
	*n = PyBytes_GET_SIZE(b);
	return PyBytes_AS_STRING(b);
}

/* t's n bytes with each newline a space, as the line protocol writes them
 * (its lines end at a newline), in a new bytes object that replaces *tmp. */
static const char *sp_no_newline(const char *t, Py_ssize_t n, PyObject **tmp)
{
	PyObject *b = PyBytes_FromStringAndSize(t, n);
	Py_XDECREF(*tmp);
	if (!(*tmp = b))
		return NULL;
	char *c = PyBytes_AS_STRING(b);
	for (char *nl = memchr(c, '\n', (size_t)n); nl; nl = memchr(nl, '\n', (size_t)(c + n - nl)))
		*nl = ' ';
	return c;
}

static inline const char *sp_text(PyObject *name, Py_ssize_t *n, PyObject **tmp)
{
	const char *t = sp_text_utf8(name, n, tmp);
	if (t && memchr(t, '\n', (size_t)*n))
		t = sp_no_newline(t, *n, tmp);
	return t;
}

/* begin or end (event): name's text to the library, in this thread */
static PyObject *sp_event_py(PyObject *name, void (*event)(const char *, size_t))
{
	if (*sp_on) {
		Py_ssize_t n;
		PyObject *tmp;
		const char *t = sp_text(name, &n, &tmp);
		if (!t)
			return NULL;
		event(t, (size_t)n);
		Py_XDECREF(tmp);
	}
	Py_RETURN_NONE;
}

PyDoc_STRVAR(sp_begin_doc, "begin(name): a span named name begins in this thread");
static PyObject *sp_begin_py(PyObject *m, PyObject *name)
{
	(void)m;
	return sp_event_py(name, sp_begin_text);
}

PyDoc_STRVAR(sp_end_doc, "end(name): the span named name ends in this thread");
static PyObject *sp_end_py(PyObject *m, PyObject *name)
{
	(void)m;
	return sp_event_py(name, sp_end_text);
}

PyDoc_STRVAR(sp_arg_doc, "arg(key, value): a typed argument of this thread's innermost open span: "
			 "bool, int (int64, or uint64 past it), float or str; key is interned");
static PyObject *sp_arg_py(PyObject *m, PyObject *const *a, Py_ssize_t n)
{
	(void)m;
	if (n != 2) {
		PyErr_SetString(PyExc_TypeError, "arg() takes a key and a value");
		return NULL;
	}
	if (!*sp_on || !sp_arg_str)
		Py_RETURN_NONE;
	Py_ssize_t kn;
	PyObject *tmp;
	const char *k = sp_text(a[0], &kn, &tmp);
	if (!k)
		return NULL;
	/* a key is a name by address: its kept copy */
	const struct sp_name *key = sp_intern(k, (size_t)kn);
	Py_XDECREF(tmp);
	if (!key)
		return PyErr_NoMemory();
	PyObject *v = a[1];
	if (PyBool_Check(v)) {
		sp_arg_bool(key->text, v == Py_True);
	} else if (PyLong_Check(v)) {
		int over = 0;
		long long i = PyLong_AsLongLongAndOverflow(v, &over);
		if (!over) {
			if (i == -1 && PyErr_Occurred())
				return NULL;
			sp_arg_i64(key->text, (int64_t)i);
		} else {
			unsigned long long u = PyLong_AsUnsignedLongLong(v);
			if (u == (unsigned long long)-1 && PyErr_Occurred())
				return NULL; /* OverflowError: beyond uint64 or below int64 */
			sp_arg_u64(key->text, (uint64_t)u);
		}
	} else if (PyFloat_Check(v)) {
		sp_arg_f64(key->text, PyFloat_AS_DOUBLE(v));
	} else {
		Py_ssize_t sn;
		const char *s = sp_text(v, &sn, &tmp);
		if (!s)
			return NULL;
		/* at most 255 bytes (spanstat_arg_str's), cut at a character's
		 * start as the lines' writer cuts: valid UTF-8 */
		if (sn > 255)
			for (sn = 255; sn > 0 && ((unsigned char)s[sn] & 0xc0) == 0x80; sn--)
				;
		sp_arg_str(key->text, s, (size_t)sn);
		Py_XDECREF(tmp);
	}
	Py_RETURN_NONE;
}

PyDoc_STRVAR(sp_profile_doc,
	     "profile(c_calls=False): every Python function call of this thread a span "
	     "from now on (and C function calls with c_calls); thread_hook starts the "
	     "others (threading.setprofile)");
static PyObject *sp_profile_py(PyObject *m, PyObject *args, PyObject *kw)
{
	(void)m;
	static char *kwlist[] = {"c_calls", NULL};
	int c_calls = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", kwlist, &c_calls))
		return NULL;
	if (!sp_lookup() || !*sp_on) {
		PyErr_SetString(PyExc_RuntimeError, "libspanstat is not collecting spans");
		return NULL;
	}
	if (sp_code_index < 0 && (sp_code_index = SP_EXTRA_INDEX(NULL)) < 0)
		return NULL;
	sp_c_calls = c_calls;
	if (sp_install() < 0)
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(sp_thread_hook_doc,
	     "thread_hook(frame, event, arg): for threading.setprofile: installs the C "
	     "profiler in the new thread, the call it sees its first span");
static PyObject *sp_thread_hook(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
	(void)m;
	if (nargs != 3 || !PyFrame_Check(args[0]) || !PyUnicode_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError, "thread_hook(frame, event, arg)");
		return NULL;
	}
	if (!sp_begin || sp_code_index < 0) {
		PyEval_SetProfile(NULL, NULL);
		Py_RETURN_NONE;
	}
	if (sp_install() < 0)
		return NULL;
	if (PyUnicode_CompareWithASCIIString(args[1], "call") == 0) {
		PyThreadState *ts = PyThreadState_Get();
		sp_profile(ts->c_profileobj, (PyFrameObject *)args[0], PyTrace_CALL, Py_None);
	}
	Py_RETURN_NONE;
}

PyDoc_STRVAR(sp_after_fork_doc,
	     "after_fork(): in a fork child, begins this thread's open calls again (the "
	     "child's recorder starts empty)");
static PyObject *sp_after_fork(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	PyThreadState *ts = PyThreadState_Get();
	if (sp_begin && ts->c_profilefunc == sp_profile && ts->c_profileobj &&
	    Py_TYPE(ts->c_profileobj) == &sp_stack_type) {
		sp_stack *s = (sp_stack *)ts->c_profileobj;
		for (unsigned i = 0; i < s->depth && i < s->cap; i++)
			if (s->stk[i])
				sp_begin(s->stk[i]->text);
	}
	Py_RETURN_NONE;
}

static PyMethodDef sp_methods[] = {
	{"available", sp_available, METH_NOARGS, sp_available_doc},
	{"begin", sp_begin_py, METH_O, sp_begin_doc},
	{"end", sp_end_py, METH_O, sp_end_doc},
	{"arg", (PyCFunction)(void (*)(void))sp_arg_py, METH_FASTCALL, sp_arg_doc},
	{"profile", (PyCFunction)(void (*)(void))sp_profile_py, METH_VARARGS | METH_KEYWORDS,
	 sp_profile_doc},
	{"thread_hook", (PyCFunction)(void (*)(void))sp_thread_hook, METH_FASTCALL,
	 sp_thread_hook_doc},
	{"after_fork", sp_after_fork, METH_NOARGS, sp_after_fork_doc},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef sp_module = {
	PyModuleDef_HEAD_INIT,
	"_spanstat",
	"The C part of spanstat: fast begin/end and the --python profiler.",
	-1,
	sp_methods,
	NULL,
	NULL,
	NULL,
	NULL,
};

PyMODINIT_FUNC PyInit__spanstat(void)
{
	if (PyType_Ready(&sp_stack_type) < 0)
		return NULL;
	if (!sp_lookup())
		sp_on = &sp_off_dummy; /* begin and end do nothing */
	return PyModule_Create(&sp_module);
}
