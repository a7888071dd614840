/* spanstat.h: the public API of libspanstat, the span library a program links
 * (or spanstat preloads) to mark regions of its own code.  Everything here is
 * a near-free no-op unless the program runs under `spanstat` with span
 * collection on.  See spanstat(3) for the full story.
 *
 * Names.  A span, instant or counter name is identified by its ADDRESS, not
 * by its text: pass string literals (or other strings that stay valid and
 * unchanged for the life of the process).  The text is copied once, the first
 * time the process uses that address; changing the text later, or reusing the
 * memory for another string, is not noticed.  Two addresses with the same text
 * are the same name in spanstat's output.  A NULL name is ignored.
 * spanstat_thread_name() is the exception: it copies its argument each call.
 *
 * Names by text.  A name made at run time ("p%d" formatted into a reused
 * buffer, a route, a file name) goes to spanstat_begin_text() and
 * spanstat_end_text(), which take the name's text and length and identify it
 * by its CONTENT: the library copies a text once, the first time the process
 * uses it, and finds the copy again by hashing the bytes (a per-thread cache,
 * then a process-wide table; no lock, no allocation after a text's first
 * use).  The name is the first len bytes of text, or those before a NUL
 * among them (read as strnlen reads: nothing past that NUL, so len may be
 * SIZE_MAX for a NUL-terminated text): texts that differ only after a NUL
 * are the same name, and len 0 is the empty name.  A text and an address-named string with the same
 * text are the same name.  The buffer may change as soon as the call returns.
 * A name (by text or address) "NAME\x1fFILE:LINE" shows as NAME, with
 * FILE and LINE where outputs locate functions (JSON); filters match NAME.
 *
 * Nesting.  Spans nest per thread.  spanstat_end() closes the innermost open
 * span of the calling thread.  If its name differs from the innermost span's
 * but matches an outer open span, the spans inside that one are closed at the
 * same time; an end that matches no open span is counted as unmatched and
 * ignored.  Spans still open when a thread or process ends (including exit
 * from a fatal signal, exec or _exit) are closed there by spanstat and marked
 * unfinished.
 *
 * Threads, fork, exec.  Every function is thread-safe, never blocks for long
 * (at most about 100 ms when spanstat stops reading, then events are dropped
 * and counted), never allocates after a thread's first event and never takes a
 * lock while recording.  A forked child records as its own process; an exec'd
 * image reconnects through the environment.
 *
 * Privileged processes.  In a process started with AT_SECURE (setuid, setgid,
 * file capabilities) the library stays off: it ignores the environment, and
 * every call returns at once.
 *
 * Linking: cc app.c $(pkg-config --cflags --libs spanstat)
 * Programs compiled with -finstrument-functions need no link change: spanstat
 * preloads this library, which provides __cyg_profile_func_enter/exit. */
#ifndef SPANSTAT_H
#define SPANSTAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SPANSTAT_NOINSTR_ __attribute__((no_instrument_function))
#define SPANSTAT_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define SPANSTAT_NOINSTR_
#define SPANSTAT_UNLIKELY_(x) (x)
#endif

/* Opens span `name` on the calling thread. */
void spanstat_begin(const char *name);
/* Closes the innermost open span (see Nesting above); `name` should be the
 * one given to the matching spanstat_begin(). */
void spanstat_end(const char *name);
/* spanstat_begin() and spanstat_end() of the name whose text is the first
 * len bytes of text (up to a NUL), whatever its address (see Names by text).
 * A NULL text is ignored. */
void spanstat_begin_text(const char *text, size_t len);
void spanstat_end_text(const char *text, size_t len);
/* A point event with no duration. */
void spanstat_instant(const char *name);
/* A sample `value` of counter `name` at this instant. */
void spanstat_counter(const char *name, int64_t value);
/* Names the calling thread in spanstat's output; the text is copied (at most
 * 255 bytes).  Without it a thread is named by its comm (pthread_setname_np). */
void spanstat_thread_name(const char *name);
/* Declares the category of every span, instant and counter whose name has
 * the text of `name` (by text, whether given by address or by text; in every
 * process of the run): Perfetto's slice categories, "category" in the JSON,
 * a column of the span table, and --filter=cat:GLOB.  Both texts are copied
 * (the category cut at 255 bytes); an empty or NULL category is ignored.  The
 * first category declared for a name holds.  Declare it before the name's
 * first event: events already recorded keep no category, and a thread that
 * met the name before has already decided what the filters say of it.  Not
 * a hot-path call: it writes a record to spanstat at once. */
void spanstat_category(const char *name, const char *category);
/* Puts a text line on the calling thread's timeline now (a log line):
 * Perfetto shows it as an instant on the thread's track, the JSON lists each
 * thread's first 64 (and counts them all), the span table's footer counts
 * them.  The text is copied (cut at 1024 bytes, and at a NUL among the first
 * len bytes for spanstat_message_text, which takes SIZE_MAX for a
 * NUL-terminated text).  Not a hot-path call: each one is a write() to
 * spanstat.  Filters do not apply to messages. */
void spanstat_message(const char *text);
void spanstat_message_text(const char *text, size_t len);
/* Async spans: a span that is not one thread's stack (an async task, a
 * request handled by a thread pool), identified in its process by id (any
 * value but 0; free again once ended).  spanstat_async_begin creates it,
 * named by name (copied, cut at 1024 bytes); any thread may then
 * spanstat_async_enter it (it runs there) and spanstat_async_exit it (the
 * same thread, when it stops running it), many times; spanstat_async_end
 * ends it.  Busy time is when some thread had it entered, idle the rest of
 * begin..end.  Its path is the async spans entered on the beginning thread
 * then (innermost last) and its name.  One still open when its process
 * ends is ended there and marked unfinished.  Not hot-path calls: each one
 * is a write() to spanstat.  Filters do not apply to async spans. */
void spanstat_async_begin(const char *name, uint64_t id);
void spanstat_async_enter(uint64_t id);
void spanstat_async_exit(uint64_t id);
void spanstat_async_end(uint64_t id);
/* Typed arguments: a value attached to the calling thread's innermost open
 * span (outside every span, to the thread itself), recorded in its events
 * beside the spans, unformatted (16 bytes each).  Perfetto shows them as
 * the slice's arguments; the JSON aggregates them per call-tree node and
 * key (count, sum, min and max of numbers; the most frequent strings);
 * --weight=arg:KEY weighs a tree by a number key's sums.  The key is a
 * name by address (see Names), interned like a span's name.  A string
 * value is a name by text (see Names by text: its first len bytes up to a
 * NUL, at most 255, SIZE_MAX for a NUL-terminated text): meant for values
 * from a small set (a route, a file type), since the process keeps each
 * distinct text.  The filters keep a span's arguments with it.  A NULL key
 * (or string) is ignored.  Threads that aggregate in the target (no output
 * needs the events) cannot keep them: spanstat counts them and says so. */
void spanstat_arg_i64(const char *key, int64_t value);
void spanstat_arg_u64(const char *key, uint64_t value);
void spanstat_arg_f64(const char *key, double value);
void spanstat_arg_bool(const char *key, int value);
void spanstat_arg_str(const char *key, const char *s, size_t len);

/* Called by code compiled with -finstrument-functions: a span per call, named
 * by the function's symbol (resolved by spanstat, static functions included). */
void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

/* Not API: non-zero while spanstat collects in this process (and after
 * its exit path ran, while the events that come too late are counted).  Unless
 * SPANSTAT_NO_INLINE is defined, the calls above become inline wrappers that
 * test it first, so that a program not run under spanstat pays one load and
 * one predictable branch per call, not a call into the library.  Arguments
 * are still evaluated exactly once; (spanstat_begin)(name) calls the library. */
extern int spanstat_on_;

#ifndef SPANSTAT_NO_INLINE
static inline SPANSTAT_NOINSTR_ void spanstat_begin_inline_(const char *name)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_begin)(name);
}

static inline SPANSTAT_NOINSTR_ void spanstat_end_inline_(const char *name)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_end)(name);
}

static inline SPANSTAT_NOINSTR_ void spanstat_instant_inline_(const char *name)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_instant)(name);
}

static inline SPANSTAT_NOINSTR_ void spanstat_counter_inline_(const char *name, int64_t value)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_counter)(name, value);
}

static inline SPANSTAT_NOINSTR_ void spanstat_begin_text_inline_(const char *text, size_t len)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_begin_text)(text, len);
}

static inline SPANSTAT_NOINSTR_ void spanstat_end_text_inline_(const char *text, size_t len)
{
	if (SPANSTAT_UNLIKELY_(spanstat_on_))
		(spanstat_end_text)(text, len);
}

#define spanstat_begin(name) spanstat_begin_inline_(name)
#define spanstat_begin_text(text, len) spanstat_begin_text_inline_(text, len)
#define spanstat_end_text(text, len) spanstat_end_text_inline_(text, len)
#define spanstat_end(name) spanstat_end_inline_(name)
#define spanstat_instant(name) spanstat_instant_inline_(name)
#define spanstat_counter(name, value) spanstat_counter_inline_(name, value)
#endif

#ifdef __cplusplus
}
#endif

/* Helpers for SPANSTAT_SCOPE; not API.  A scope's name: an address (len
 * SPANSTAT_ADDR_), or a text and its length, copied as the text calls do. */
#define SPANSTAT_ADDR_ ((size_t)-1)
struct spanstat_scope_ {
	const char *name;
	size_t len;
};

static inline SPANSTAT_NOINSTR_ struct spanstat_scope_ spanstat_scope_text_(const char *text,
									    size_t len)
{
	struct spanstat_scope_ s = {text, len};
	spanstat_begin_text(text, len);
	return s;
}

#ifdef __cplusplus
static inline SPANSTAT_NOINSTR_ struct spanstat_scope_ spanstat_scope_begin_(const char *name)
{
	struct spanstat_scope_ s = {name, SPANSTAT_ADDR_};
	spanstat_begin(name);
	return s;
}

/* Any string-like object of C++ with data() and size() (std::string,
 * std::string_view): a name by text. */
template <class S>
static inline SPANSTAT_NOINSTR_ auto spanstat_scope_begin_(const S &text)
	-> decltype((void)text.data(), (void)text.size(), spanstat_scope_())
{
	return spanstat_scope_text_(text.data(), text.size());
}

static inline SPANSTAT_NOINSTR_ struct spanstat_scope_ spanstat_scope_begin_(const char *text,
									     size_t len)
{
	return spanstat_scope_text_(text, len);
}
#else
static inline SPANSTAT_NOINSTR_ struct spanstat_scope_ spanstat_scope_begin_(const char *name)
{
	struct spanstat_scope_ s = {name, SPANSTAT_ADDR_};
	spanstat_begin(name);
	return s;
}
#endif

static inline SPANSTAT_NOINSTR_ void spanstat_scope_end_(const struct spanstat_scope_ *s)
{
	if (s->len == SPANSTAT_ADDR_)
		spanstat_end(s->name);
	else
		spanstat_end_text(s->name, s->len);
}

#define SPANSTAT_CAT2_(a, b) a##b
#define SPANSTAT_CAT_(a, b) SPANSTAT_CAT2_(a, b)

/* SPANSTAT_SCOPE(name): begins span `name` here and ends it when the enclosing
 * block is left, by any path (return, break, goto, C++ exception).  A
 * declaration: use it where a declaration may appear.  gcc and clang, C and
 * C++ (it relies on the cleanup attribute).  In C++, `name` may also be a
 * std::string, a std::string_view (any type with data() and size()), or a
 * text and its length, SPANSTAT_SCOPE(text, len): a name by text, as
 * spanstat_begin_text().  SPANSTAT_SCOPE_TEXT(text, len) is the C way to the
 * same. */
#define SPANSTAT_SCOPE(...)                                                \
	struct spanstat_scope_ SPANSTAT_CAT_(spanstat_scope_, __COUNTER__) \
		__attribute__((cleanup(spanstat_scope_end_), unused)) =    \
			spanstat_scope_begin_(__VA_ARGS__)
#define SPANSTAT_SCOPE_TEXT(text, len)                                     \
	struct spanstat_scope_ SPANSTAT_CAT_(spanstat_scope_, __COUNTER__) \
		__attribute__((cleanup(spanstat_scope_end_), unused)) =    \
			spanstat_scope_text_(text, len)

#endif
