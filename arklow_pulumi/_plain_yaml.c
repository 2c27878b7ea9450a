/* A compiled reader for block-style plain YAML (arklow_pulumi/yaml_plain.py).
 *
 * loads(text) -> (True, value) | (False, None). It is called only for a text that
 * yaml_plain.is_plain accepted, and must give exactly what yaml_rs.loads(text,
 * parse_datetime=False, duplicate_key_policy=Error) gives (same values, types and key order) for
 * every document it reads; anything it is not sure of it declines, and yaml_rs reads it then.
 *
 * What it reads, line by line (blank and comment lines skipped wherever they are):
 *   - block mappings (`key: value`, `key:` with the value nested below, or nothing: None) and
 *     block sequences (`- item`, `-` alone), nested by indentation; a sequence may sit at the
 *     column of its mapping key (`lanes:\n- a`); a `- key: value` item is a mapping whose further
 *     keys sit at the column of its first key;
 *   - flow lists and maps of scalars on one line (`[a, b]`, `{gpu: 1.5}`, `[]`, `{}`, a trailing
 *     comma);
 *   - scalars of yaml_plain's grammar: words (a letter first; letters, digits, `_ . / + -`, single
 *     spaces inside), of which null/Null/NULL are None and true/True/TRUE, false/False/FALSE
 *     booleans; numbers `[-+]?(0|[1-9][0-9]*)(.[0-9]*([eE][-+][0-9]+)?)?` and
 *     `.[0-9]+([eE][-+][0-9]+)?` (an int without `.`, else a float as Python's float() reads it);
 *     quoted strings without escapes or inner quotes;
 *   - one leading `---` line.
 * It declines a key given twice, a key that is not a string (a number, null, a boolean), a more
 * indented line after an inline value (a multi-line plain scalar, or an error), several `- `
 * markers on one line, a nested node given as a lone scalar on the next line, any character or
 * form outside the above, and nesting deeper than MAX_DEPTH (indentation bounds it anyway).
 *
 * Scalar objects are kept in a small direct-mapped table by their text for the length of one
 * call (keys, resource names and numbers repeat across the lanes of a topology).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 400
#define CACHE_BITS 12
#define CACHE_SIZE (1 << CACHE_BITS)
#define CACHE_TEXT 23

typedef struct {
    PyObject *value; /* owned; NULL when empty */
    unsigned char len, kind;
    char text[CACHE_TEXT];
} Slot;

enum { K_WORD = 1, K_QUOTED, K_INT, K_FLOAT };

typedef struct {
    const char *end;  /* end of the text */
    const char *line; /* start of the current content line */
    const char *cur;  /* cursor in the current line */
    const char *eol;  /* end of the current line ('\n' or end) */
    long ind;         /* indentation of the current line; -1 past the last one */
    Slot *cache;
} Reader;

/* Every reader below returns NULL without an exception set to decline. */

static inline int is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '/' || c == '+' || c == '-';
}

static inline int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether [p, e) is a comment's text: tabs and printable ASCII (PyYAML refuses other control
 * characters; yaml_rs ends a line at a carriage return and the document at a NUL). */
static int comment_ok(const char *p, const char *e) {
    for (; p < e; p++)
        if ((*p < 0x20 && *p != '\t') || *p > 0x7e) return 0;
    return 1;
}

/* Moves to the next line holding content (not blank, not a comment) after `from`. A comment
 * line with a character outside comment_ok is made a content line (which then declines). */
static void next_line(Reader *r, const char *from) {
    const char *p = from;
    while (p < r->end) {
        const char *start = p;
        while (p < r->end && *p == ' ') p++;
        if (p == r->end) break;
        if (*p == '\n' || *p == '#') {
            const char *nl = memchr(p, '\n', (size_t)(r->end - p));
            if (!comment_ok(p, nl ? nl : r->end)) {
                r->line = start;
                r->cur = p;
                r->eol = nl ? nl : r->end;
                r->ind = (long)(p - start);
                return;
            }
            if (nl == NULL) break;
            p = nl + 1;
            continue;
        }
        const char *nl = memchr(p, '\n', (size_t)(r->end - p));
        r->line = start;
        r->cur = p;
        r->eol = nl ? nl : r->end;
        r->ind = (long)(p - start);
        return;
    }
    r->line = r->cur = r->eol = r->end;
    r->ind = -1;
}

static inline void advance(Reader *r) { next_line(r, r->eol < r->end ? r->eol + 1 : r->end); }

/* Whether the rest of the line from `p` is spaces, then nothing or a comment after a space. */
static int rest_is_empty(const Reader *r, const char *p) {
    const char *q = p;
    while (q < r->eol && *q == ' ') q++;
    if (q == r->eol) return 1;
    return *q == '#' && q > p && comment_ok(q, r->eol);
}

/* One scalar token from *p (not past eol): sets [*a, *b) and its kind, moves *p past it. */
static int scan_scalar(const Reader *r, const char **p, const char **a, const char **b, int *kind) {
    const char *s = *p, *e = r->eol;
    if (s >= e) return 0;
    char c = *s;
    if (c == '"' || c == '\'') {
        const char *q = s + 1;
        while (q < e && *q != c) {
            if (*q < 0x20 || *q > 0x7e || (c == '"' && *q == '\\')) return 0;
            q++;
        }
        if (q >= e) return 0;
        *a = s + 1;
        *b = q;
        *kind = K_QUOTED;
        *p = q + 1;
        return 1;
    }
    if (is_letter(c)) {
        const char *q = s + 1;
        for (;;) {
            while (q < e && is_word_char(*q)) q++;
            if (q + 1 < e && *q == ' ' && is_word_char(q[1])) {
                q++;
                continue;
            }
            break;
        }
        /* yes/no/on/off (any of their casings YAML 1.1 reads as booleans) as the first part:
         * outside the grammar (PyYAML and yaml_rs differ) */
        size_t n = 0;
        while (s + n < q && n < 4 && is_word_char(s[n])) n++;
        char first = (char)(c | 0x20); /* a letter, lower-cased */
        if (n <= 3 && (first == 'y' || first == 'n' || first == 'o')) {
            static const char *const bools[] = {"yes", "Yes", "YES", "no", "No", "NO",
                                                "on",  "On",  "ON",  "off", "Off", "OFF"};
            for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++)
                if (strlen(bools[i]) == n && memcmp(bools[i], s, n) == 0) return 0;
        }
        *a = s;
        *b = q;
        *kind = K_WORD;
        *p = q;
        return 1;
    }
    /* a number */
    const char *q = s;
    int is_float = 0;
    if (*q == '.') {
        q++;
        const char *d = q;
        while (q < e && is_digit(*q)) q++;
        if (q == d || q - d > 30) return 0;
        is_float = 1;
    } else {
        if (*q == '-' || *q == '+') q++;
        if (q >= e || !is_digit(*q)) return 0;
        if (*q == '0') {
            q++;
        } else {
            const char *d = q;
            while (q < e && is_digit(*q)) q++;
            if (q - d > 30) return 0;
        }
        if (q < e && *q == '.') {
            q++;
            const char *d = q;
            while (q < e && is_digit(*q)) q++;
            if (q - d > 30) return 0;
            is_float = 1;
        }
    }
    if (is_float && q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q >= e || (*q != '-' && *q != '+')) return 0;
        q++;
        const char *d = q;
        while (q < e && is_digit(*q)) q++;
        if (q == d || q - d > 3) return 0;
    }
    if (q < e && is_word_char(*q)) return 0;
    *a = s;
    *b = q;
    *kind = is_float ? K_FLOAT : K_INT;
    *p = q;
    return 1;
}

static PyObject *new_ascii(const char *a, Py_ssize_t n) {
    PyObject *s = PyUnicode_New(n, 127);
    if (s != NULL) memcpy(PyUnicode_1BYTE_DATA(s), a, (size_t)n);
    return s;
}

static PyObject *build(int kind, const char *a, const char *b) {
    Py_ssize_t n = b - a;
    if (kind == K_WORD || kind == K_QUOTED) return new_ascii(a, n);
    char buf[80];
    if (n >= (Py_ssize_t)sizeof buf) return NULL;
    memcpy(buf, a, (size_t)n);
    buf[n] = '\0';
    if (kind == K_INT) {
        const char *d = buf;
        int negative = 0;
        if (*d == '-' || *d == '+') negative = *d++ == '-';
        if (strlen(d) <= 18) {
            long long v = 0;
            for (; *d; d++) v = v * 10 + (*d - '0');
            return PyLong_FromLongLong(negative ? -v : v);
        }
        return PyLong_FromString(buf, NULL, 10);
    }
    char *stop = NULL;
    double v = PyOS_string_to_double(buf, &stop, NULL);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    if (stop != buf + n) return NULL;
    return PyFloat_FromDouble(v);
}

static int word_is(const char *a, Py_ssize_t n, const char *lower) {
    /* `lower`, its Title case or its UPPER case */
    size_t m = strlen(lower);
    if ((size_t)n != m) return 0;
    if (memcmp(a, lower, m) == 0) return 1;
    int title = 1, upper = 1;
    for (size_t i = 0; i < m; i++) {
        char u = (char)(lower[i] - 'a' + 'A');
        if (a[i] != u) upper = 0;
        if (a[i] != (i == 0 ? u : lower[i])) title = 0;
    }
    return title || upper;
}

/* The object of a scalar token (a new reference), NULL to decline (or on error). */
static PyObject *scalar(Reader *r, int kind, const char *a, const char *b) {
    Py_ssize_t n = b - a;
    if (kind == K_WORD && n >= 4 && n <= 5) {
        char first = (char)(a[0] | 0x20); /* a letter, lower-cased */
        if (first == 'n' && word_is(a, n, "null")) Py_RETURN_NONE;
        if (first == 't' && word_is(a, n, "true")) Py_RETURN_TRUE;
        if (first == 'f' && word_is(a, n, "false")) Py_RETURN_FALSE;
    }
    int ck = kind == K_QUOTED ? K_WORD : kind; /* a quoted text and a word: the same str */
    if (n > CACHE_TEXT) return build(kind, a, b);
    size_t h = 2166136261u ^ (size_t)ck;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)a[i]) * 16777619u;
    Slot *slot = &r->cache[(h ^ (h >> 15)) & (CACHE_SIZE - 1)];
    if (slot->value != NULL && slot->kind == ck && slot->len == n && memcmp(slot->text, a, (size_t)n) == 0) {
        Py_INCREF(slot->value);
        return slot->value;
    }
    PyObject *v = build(kind, a, b);
    if (v == NULL) return NULL;
    Py_XSETREF(slot->value, Py_NewRef(v));
    slot->kind = (unsigned char)ck;
    slot->len = (unsigned char)n;
    memcpy(slot->text, a, (size_t)n);
    return v;
}

/* A mapping key: a str (a word that is not null/true/false, or a quoted text), else decline. */
static PyObject *key_of(Reader *r, int kind, const char *a, const char *b) {
    if (kind != K_WORD && kind != K_QUOTED) return NULL;
    PyObject *k = scalar(r, kind, a, b);
    if (k != NULL && !PyUnicode_CheckExact(k)) Py_CLEAR(k);
    return k;
}

static inline const char *skip_spaces(const Reader *r, const char *p) {
    while (p < r->eol && *p == ' ') p++;
    return p;
}

/* One scalar token in a flow collection. A word whose last part is a lone `-` is left out unless
 * a `:` follows it: yaml_rs refuses `[a -]` and `{k: a -, j: b}` (it reads ` -` then `,]}` as a
 * scalar that starts with an indicator). */
static int scan_flow_scalar(const Reader *r, const char **p, const char **a, const char **b,
                            int *kind) {
    if (!scan_scalar(r, p, a, b, kind)) return 0;
    if (*kind != K_WORD || *b - *a < 2 || (*b)[-1] != '-' || (*b)[-2] != ' ') return 1;
    return *p < r->eol && **p == ':'; /* `{a -: b}` is read */
}

/* A flow list or map of scalars at *p ('[' or '{'); moves *p past its closing bracket. */
static PyObject *flow(Reader *r, const char **p) {
    int is_map = **p == '{';
    char close = is_map ? '}' : ']';
    PyObject *out = is_map ? PyDict_New() : PyList_New(0);
    if (out == NULL) return NULL;
    const char *q = skip_spaces(r, *p + 1);
    while (q < r->eol && *q != close) {
        const char *a, *b;
        int kind;
        if (!scan_flow_scalar(r, &q, &a, &b, &kind)) goto decline;
        if (is_map) {
            if (q + 1 >= r->eol || q[0] != ':' || q[1] != ' ') goto decline;
            PyObject *k = key_of(r, kind, a, b);
            if (k == NULL) goto decline;
            q = skip_spaces(r, q + 1);
            const char *va, *vb;
            int vkind;
            PyObject *v = NULL;
            if (scan_flow_scalar(r, &q, &va, &vb, &vkind)) v = scalar(r, vkind, va, vb);
            if (v == NULL) {
                Py_DECREF(k);
                goto decline;
            }
            Py_ssize_t before = PyDict_GET_SIZE(out);
            int failed = PyDict_SetItem(out, k, v);
            Py_DECREF(k);
            Py_DECREF(v);
            if (failed || PyDict_GET_SIZE(out) == before) goto decline;
        } else {
            PyObject *v = scalar(r, kind, a, b);
            if (v == NULL) goto decline;
            int failed = PyList_Append(out, v);
            Py_DECREF(v);
            if (failed) goto decline;
        }
        q = skip_spaces(r, q);
        if (q < r->eol && *q == ',') {
            q = skip_spaces(r, q + 1);
        } else if (q >= r->eol || *q != close) {
            goto decline;
        }
    }
    if (q >= r->eol) goto decline;
    *p = q + 1;
    return out;
decline:
    Py_DECREF(out);
    return NULL;
}

/* An inline value (a scalar or a flow collection) at *p that ends its line; NULL to decline. */
static PyObject *inline_value(Reader *r, const char *p) {
    PyObject *v;
    if (*p == '[' || *p == '{') {
        v = flow(r, &p);
    } else {
        const char *a, *b;
        int kind;
        if (!scan_scalar(r, &p, &a, &b, &kind)) return NULL;
        v = scalar(r, kind, a, b);
    }
    if (v != NULL && !rest_is_empty(r, p)) Py_CLEAR(v);
    return v;
}

static inline int is_dash(const Reader *r) {
    const char *p = r->cur;
    return p < r->eol && *p == '-' && (p + 1 == r->eol || p[1] == ' ');
}

static PyObject *block_map(Reader *r, long col, int depth);
static PyObject *block_seq(Reader *r, long col, int depth);

/* The node nested under an empty `key:` or `-`: a mapping or a sequence on the lines below. */
static PyObject *nested(Reader *r, int depth) {
    if (depth > MAX_DEPTH) return NULL;
    return is_dash(r) ? block_seq(r, r->ind, depth) : block_map(r, r->ind, depth);
}

/* A block mapping whose keys sit at column `col`; the cursor is on its first key (which may
 * follow a `- ` on its line). Returns with the reader on the first line after it. */
static PyObject *block_map(Reader *r, long col, int depth) {
    PyObject *out = PyDict_New();
    if (out == NULL) return NULL;
    for (;;) {
        if (is_dash(r)) goto decline;
        const char *p = r->cur, *a, *b;
        int kind;
        if (!scan_scalar(r, &p, &a, &b, &kind)) goto decline;
        if (p >= r->eol || *p != ':' || (p + 1 < r->eol && p[1] != ' ')) goto decline;
        PyObject *k = key_of(r, kind, a, b);
        if (k == NULL) goto decline;
        const char *after = p + 1;
        p = skip_spaces(r, after);
        PyObject *v;
        if (rest_is_empty(r, after)) {
            advance(r);
            if (r->ind > col) {
                v = nested(r, depth + 1);
            } else if (r->ind == col && is_dash(r)) {
                v = block_seq(r, col, depth + 1); /* a sequence at its key's column */
            } else {
                v = Py_NewRef(Py_None);
            }
        } else {
            v = inline_value(r, p);
            if (v != NULL) {
                advance(r);
                if (r->ind > col) Py_CLEAR(v); /* a continuation line */
            }
        }
        if (v == NULL) {
            Py_DECREF(k);
            goto decline;
        }
        Py_ssize_t before = PyDict_GET_SIZE(out);
        int failed = PyDict_SetItem(out, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (failed || PyDict_GET_SIZE(out) == before) goto decline; /* a key given twice */
        if (r->ind < col) return out;
        if (r->ind > col) goto decline;
    }
decline:
    Py_DECREF(out);
    return NULL;
}

/* A block sequence whose `- ` markers sit at column `col`; the cursor is on the first marker.
 * Returns at the first line that is not one of its items (at a column <= col). */
static PyObject *block_seq(Reader *r, long col, int depth) {
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    while (r->ind == col && is_dash(r)) {
        const char *p = skip_spaces(r, r->cur + 1);
        PyObject *v;
        if (rest_is_empty(r, r->cur + 1)) {
            advance(r);
            v = r->ind > col ? nested(r, depth + 1) : Py_NewRef(Py_None);
        } else if (*p == '-' || *p == '[' || *p == '{') {
            if (*p == '-' && (p + 1 == r->eol || p[1] == ' ')) goto decline; /* `- - x` */
            v = inline_value(r, p);
            if (v != NULL) {
                advance(r);
                if (r->ind > col) Py_CLEAR(v);
            }
        } else {
            const char *q = p, *a, *b;
            int kind;
            if (!scan_scalar(r, &q, &a, &b, &kind)) goto decline;
            if (q < r->eol && *q == ':') {
                if (depth > MAX_DEPTH) goto decline;
                long item_col = col + (long)(p - r->cur);
                r->cur = p;
                r->ind = item_col;
                v = block_map(r, item_col, depth + 1);
            } else {
                v = inline_value(r, p);
                if (v != NULL) {
                    advance(r);
                    if (r->ind > col) Py_CLEAR(v);
                }
            }
        }
        if (v == NULL) goto decline;
        int failed = PyList_Append(out, v);
        Py_DECREF(v);
        if (failed) goto decline;
        if (r->ind > col) goto decline;
    }
    return out;
decline:
    Py_DECREF(out);
    return NULL;
}

static PyObject *document(Reader *r, const char *start) {
    next_line(r, start);
    if (r->ind < 0) Py_RETURN_NONE;
    PyObject *v;
    if (is_dash(r)) {
        v = block_seq(r, r->ind, 0);
    } else {
        const char *p = r->cur, *a, *b;
        int kind;
        int is_key = *p != '[' && *p != '{' && scan_scalar(r, &p, &a, &b, &kind) && p < r->eol &&
                     *p == ':';
        if (is_key) {
            v = block_map(r, r->ind, 0);
        } else {
            v = inline_value(r, r->cur);
            if (v != NULL) advance(r);
        }
    }
    if (v != NULL && r->ind >= 0) Py_CLEAR(v); /* something after the document's node */
    return v;
}

static PyObject *loads(PyObject *module, PyObject *text) {
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "loads() takes a str");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(text)) return Py_BuildValue("(OO)", Py_False, Py_None);
    const char *s = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Slot *cache = PyMem_Calloc(CACHE_SIZE, sizeof(Slot));
    if (cache == NULL) return PyErr_NoMemory();
    Reader r = {s + n, s, s, s, 0, cache};
    int marker = n >= 4 && memcmp(s, "---\n", 4) == 0;
    /* The containers built hold only strs, numbers and each other, without cycles: the cyclic
     * collector, which would otherwise run over them again and again as they grow, is paused. */
    int collecting = PyGC_Disable();
    PyObject *v = document(&r, marker ? s + 4 : s);
    if (collecting) PyGC_Enable();
    for (size_t i = 0; i < CACHE_SIZE; i++) Py_XDECREF(cache[i].value);
    PyMem_Free(cache);
    if (v == NULL) {
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_MemoryError)) PyErr_Clear();
            else return NULL;
        }
        return Py_BuildValue("(OO)", Py_False, Py_None);
    }
    PyObject *out = PyTuple_Pack(2, Py_True, v);
    Py_DECREF(v);
    return out;
}

static PyMethodDef methods[] = {
    {"loads", loads, METH_O,
     "loads(text) -> (True, value) when the block-style plain YAML `text` is read, else (False, "
     "None)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_plain_yaml", "A compiled reader for block-style plain YAML.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__plain_yaml(void) { return PyModule_Create(&module); }
