/* The lane part of `arklow allocate`'s output (arklow_pulumi/cli/rendering.py), compiled.
 *
 * At 100,000 lanes the Python spends most of a second on f-strings and number texts; the same
 * characters come out of here in a few tens of milliseconds. rendering.py stays the reference
 * and the fallback (tests/cli/test_rendering_native.py compares the two, character for
 * character):
 *
 * - json_lanes(keys, demand, allocation, held, admission) -> str | None: the lane entries of
 *   allocation_json, joined by ",\n". Keys escaped as json.encoder.encode_basestring_ascii
 *   (lower-case \uXXXX, surrogate pairs above U+FFFF); numbers as rendering._json_number
 *   (integral with |v| < 2**53 as an integer, -0.0 as 0, else float.__repr__).
 * - table_lanes(keys, demand, allocation, admission, held, color) -> (str, int) | None: the
 *   LANES table of allocation_table (header, rule and one row per lane, joined by "\n", the
 *   rows with HELD in red when color) and how many lanes hold work back. Cells as
 *   rendering._fmt: format(v, "g") when |v| >= 1e-3 or v == 0, else format(v, ".2e").
 *
 * Both return None, and the Python runs, when anything is not what they handle: a key that is
 * not exactly a str, a column that is not a list or tuple of the keys' length, an item that is
 * not exactly a float (an int, a subclass), or, for JSON, a NaN or an infinity (the Python
 * raises its own ValueError for it).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TWO_53 9007199254740992.0

/* A growing byte buffer (the JSON text is ASCII). */
typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Buf;

static int reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* Only after reserve(). */
static inline void put(Buf *b, const char *s, Py_ssize_t n) {
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
}

#define PUT_LITERAL(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

/* The decimal digits of an integer-valued double with |v| < 2**53 (-0.0 as "0"); returns the
 * length. out holds at least 24 bytes. */
static int integer_text(char *out, double v) {
    long long k = (long long)v;
    unsigned long long u = k < 0 ? (unsigned long long)(-k) : (unsigned long long)k;
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    int len = 0;
    if (k < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    return len;
}

/* The texts of the numbers met so far, by their bits: a direct-mapped table (a collision
 * replaces the slot). Demands, fair shares and zeros repeat across lanes; the shortest repr
 * (dtoa) is most of the time otherwise. */
typedef struct {
    uint64_t bits;
    unsigned char len; /* 0: empty */
    char text[31];
} Slot;

typedef struct {
    Slot *slots;
    int shift;
} Cache;

static int cache_init(Cache *c, Py_ssize_t numbers) {
    int log2 = 10;
    while (log2 < 12 && ((Py_ssize_t)1 << log2) < numbers / 2) log2++;
    c->shift = 64 - log2;
    c->slots = PyMem_Calloc((size_t)1 << log2, sizeof(Slot));
    if (c->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static inline Slot *cache_slot(const Cache *c, double v, uint64_t *bits) {
    memcpy(bits, &v, sizeof v);
    return &c->slots[(*bits * 0x9E3779B97F4A7C15ULL) >> c->shift];
}

/* The text of v in *slot from PyOS_double_to_string: its length, 0 (too long to keep: never
 * for these formats) or -1 on error. */
static int cache_fill(Slot *slot, uint64_t bits, double v, char code, int precision,
                      int flags) {
    char *s = PyOS_double_to_string(v, code, precision, flags, NULL);
    if (s == NULL) return -1;
    size_t n = strlen(s);
    if (n >= sizeof slot->text) {
        PyMem_Free(s);
        return 0;
    }
    memcpy(slot->text, s, n);
    PyMem_Free(s);
    slot->bits = bits;
    slot->len = (unsigned char)n;
    return (int)n;
}

/* The items of a list or tuple of exactly n items into *items: 1, else 0 (no exception set).
 * (An empty list's item array is NULL.) */
static int items_of(PyObject *seq, Py_ssize_t n, PyObject ***items) {
    if (!(PyList_CheckExact(seq) || PyTuple_CheckExact(seq))) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != n) return 0;
    *items = PySequence_Fast_ITEMS(seq);
    return 1;
}

/* --- JSON ------------------------------------------------------------------------------ */

/* rendering._json_number of an exact finite float: 1 written, 0 not handled here, -1 error. */
static int json_number(Buf *b, const Cache *cache, PyObject *o) {
    if (!PyFloat_CheckExact(o)) return 0;
    double v = PyFloat_AS_DOUBLE(o);
    if (!isfinite(v)) return 0;
    if (reserve(b, 32) < 0) return -1;
    if (v == floor(v) && fabs(v) < TWO_53) {
        b->len += integer_text(b->p + b->len, v);
        return 1;
    }
    uint64_t bits;
    Slot *slot = cache_slot(cache, v, &bits);
    int n = slot->len && slot->bits == bits
                ? slot->len
                : cache_fill(slot, bits, v, 'r', 0, Py_DTSF_ADD_DOT_0);
    if (n <= 0) return n; /* 0: longer than any repr; left to the Python */
    put(b, slot->text, n);
    return 1;
}

static const char HEX[] = "0123456789abcdef";

static inline char *escape_u(char *q, Py_UCS4 c) {
    q[0] = '\\';
    q[1] = 'u';
    q[2] = HEX[(c >> 12) & 0xf];
    q[3] = HEX[(c >> 8) & 0xf];
    q[4] = HEX[(c >> 4) & 0xf];
    q[5] = HEX[c & 0xf];
    return q + 6;
}

/* json.encoder.encode_basestring_ascii of an exact str: 1 written, 0 not handled, -1 error. */
static int json_key(Buf *b, PyObject *key) {
    if (!PyUnicode_CheckExact(key)) return 0;
    if (PyUnicode_READY(key) < 0) return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    if (n > (PY_SSIZE_T_MAX - 2) / 12 || reserve(b, 2 + 12 * n) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    char *q = b->p + b->len;
    *q++ = '"';
    Py_ssize_t i = 0;
    if (kind == PyUnicode_1BYTE_KIND) { /* the usual key: a run of plain characters first */
        const unsigned char *src = data;
        while (i < n && src[i] >= ' ' && src[i] <= '~' && src[i] != '\\' && src[i] != '"') i++;
        memcpy(q, src, (size_t)i);
        q += i;
    }
    for (; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= ' ' && c <= '~' && c != '\\' && c != '"') {
            *q++ = (char)c;
            continue;
        }
        *q++ = '\\';
        switch (c) {
            case '\\': *q++ = '\\'; break;
            case '"': *q++ = '"'; break;
            case '\b': *q++ = 'b'; break;
            case '\f': *q++ = 'f'; break;
            case '\n': *q++ = 'n'; break;
            case '\r': *q++ = 'r'; break;
            case '\t': *q++ = 't'; break;
            default:
                q--;
                if (c >= 0x10000) {
                    Py_UCS4 v = c - 0x10000;
                    q = escape_u(q, 0xd800 | ((v >> 10) & 0x3ff));
                    q = escape_u(q, 0xdc00 | (v & 0x3ff));
                } else {
                    q = escape_u(q, c);
                }
        }
    }
    *q++ = '"';
    b->len = q - b->p;
    return 1;
}

static PyObject *ascii_str(const Buf *b) {
    PyObject *s = PyUnicode_New(b->len, 127);
    if (s != NULL && b->len) memcpy(PyUnicode_DATA(s), b->p, (size_t)b->len);
    return s;
}

static PyObject *json_lanes(PyObject *self, PyObject *args) {
    PyObject *keys, *cols[4];
    if (!PyArg_ParseTuple(args, "OOOOO:json_lanes", &keys, &cols[0], &cols[1], &cols[2],
                          &cols[3]))
        return NULL;
    if (!PyTuple_CheckExact(keys) && !PyList_CheckExact(keys)) Py_RETURN_NONE;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(keys);
    PyObject **key = PySequence_Fast_ITEMS(keys);
    PyObject **item[4];
    for (int c = 0; c < 4; c++)
        if (!items_of(cols[c], n, &item[c])) Py_RETURN_NONE;
    static const char *label[4] = {": {\"demand\": ", ", \"allocation\": ", ", \"held\": ",
                                   ", \"admission\": "};
    Buf b = {NULL, 0, 0};
    Cache cache;
    if (cache_init(&cache, 4 * n) < 0) return NULL;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n && ok > 0; i++) {
        if ((ok = reserve(&b, 8)) < 0) break;
        if (i) PUT_LITERAL(&b, ",\n");
        PUT_LITERAL(&b, "    ");
        if ((ok = json_key(&b, key[i])) <= 0) break;
        for (int c = 0; c < 4 && ok > 0; c++) {
            Py_ssize_t m = (Py_ssize_t)strlen(label[c]);
            if ((ok = reserve(&b, m + 1)) < 0) break;
            put(&b, label[c], m);
            ok = json_number(&b, &cache, item[c][i]);
        }
        if (ok > 0 && (ok = reserve(&b, 1)) == 0) {
            PUT_LITERAL(&b, "}");
            ok = 1;
        }
    }
    PyObject *out = NULL;
    if (ok > 0) out = ascii_str(&b);
    else if (ok == 0) out = Py_NewRef(Py_None);
    PyMem_Free(b.p);
    PyMem_Free(cache.slots);
    return out;
}

/* --- table ----------------------------------------------------------------------------- */

#define CELL 24 /* "-1.23457e+308" is 13 characters; "nan", "-inf" fewer */

/* rendering._fmt of an exact float into out (CELL bytes): its length, 0 not handled, -1 error. */
static int table_cell(char *out, const Cache *cache, PyObject *o) {
    if (!PyFloat_CheckExact(o)) return 0;
    double v = PyFloat_AS_DOUBLE(o);
    if (v == 0) {
        if (signbit(v)) {
            memcpy(out, "-0", 2);
            return 2;
        }
        out[0] = '0';
        return 1;
    }
    if (v == floor(v) && fabs(v) < 1e6) return integer_text(out, v); /* what "g" prints */
    uint64_t bits;
    Slot *slot = cache_slot(cache, v, &bits);
    int n = slot->len && slot->bits == bits ? slot->len
            : fabs(v) >= 1e-3               ? cache_fill(slot, bits, v, 'g', 6, 0)
                                            : cache_fill(slot, bits, v, 'e', 2, 0);
    if (n <= 0 || n >= CELL) return n < 0 ? -1 : 0; /* too long: never; the Python then */
    memcpy(out, slot->text, (size_t)n);
    return n;
}

/* Writes ASCII into a str being built, at *pos. */
static inline void write_ascii(int kind, void *data, Py_ssize_t *pos, const char *s,
                               Py_ssize_t n) {
    if (kind == PyUnicode_1BYTE_KIND) {
        memcpy((char *)data + *pos, s, (size_t)n);
        *pos += n;
        return;
    }
    for (Py_ssize_t i = 0; i < n; i++) PyUnicode_WRITE(kind, data, (*pos)++, (Py_UCS4)s[i]);
}

static inline void write_fill(int kind, void *data, Py_ssize_t *pos, char c, Py_ssize_t n) {
    if (kind == PyUnicode_1BYTE_KIND) {
        memset((char *)data + *pos, c, (size_t)n);
        *pos += n;
        return;
    }
    for (Py_ssize_t i = 0; i < n; i++) PyUnicode_WRITE(kind, data, (*pos)++, (Py_UCS4)c);
}

static const char RED[] = "\x1b[1;31m", RESET[] = "\x1b[0m";
#define LEN(s) ((Py_ssize_t)(sizeof(s) - 1))

static PyObject *table_lanes(PyObject *self, PyObject *args) {
    PyObject *keys, *cols[4];
    int color;
    if (!PyArg_ParseTuple(args, "OOOOOp:table_lanes", &keys, &cols[0], &cols[1], &cols[2],
                          &cols[3], &color))
        return NULL;
    if (!PyTuple_CheckExact(keys) && !PyList_CheckExact(keys)) Py_RETURN_NONE;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(keys);
    PyObject **key = PySequence_Fast_ITEMS(keys);
    PyObject **item[4]; /* demand, allocation, admission, held: the columns' order */
    for (int c = 0; c < 4; c++)
        if (!items_of(cols[c], n, &item[c])) Py_RETURN_NONE;
    static const char *header[5] = {"lane", "demand", "allocation", "admission", "held"};
    Py_ssize_t width[6];
    for (int c = 0; c < 5; c++) width[c] = (Py_ssize_t)strlen(header[c]);
    width[5] = 0;
    Py_UCS4 maxchar = 127;
    char *cells = n ? PyMem_Malloc((size_t)n * 4 * CELL) : NULL;
    unsigned char *lens = n ? PyMem_Malloc((size_t)n * 4) : NULL;
    Cache cache = {NULL, 0};
    if ((n && (cells == NULL || lens == NULL)) || cache_init(&cache, 4 * n) < 0) {
        PyMem_Free(cells);
        PyMem_Free(lens);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    PyObject *out = NULL;
    Py_ssize_t held_count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(key[i])) goto fallback;
        if (PyUnicode_READY(key[i]) < 0) goto done;
        Py_ssize_t k = PyUnicode_GET_LENGTH(key[i]);
        if (k > width[0]) width[0] = k;
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(key[i]);
        if (m > maxchar) maxchar = m;
        for (int c = 0; c < 4; c++) {
            int len = table_cell(cells + (i * 4 + c) * CELL, &cache, item[c][i]);
            if (len < 0) goto done;
            if (len == 0) goto fallback;
            lens[i * 4 + c] = (unsigned char)len;
            if (len > width[c + 1]) width[c + 1] = len;
        }
        if (PyFloat_AS_DOUBLE(item[3][i]) > 0) held_count++;
    }
    if (held_count) width[5] = 4;
    /* the header and the rule: five columns, "  " between, no trailing blanks */
    Py_ssize_t head = 0;
    for (int c = 0; c < 5; c++) head += width[c];
    head += 2 * 4;
    Py_ssize_t rule = head + (width[5] ? 2 + width[5] : 0);
    Py_ssize_t total = head + 1 + rule;
    for (Py_ssize_t i = 0; i < n; i++) {
        int held = PyFloat_AS_DOUBLE(item[3][i]) > 0;
        total += 1 + head + (held ? 6 : 0) + (held && color ? LEN(RED) + LEN(RESET) : 0);
    }
    out = PyUnicode_New(total, maxchar);
    if (out == NULL) goto done;
    int kind = PyUnicode_KIND(out);
    void *data = PyUnicode_DATA(out);
    Py_ssize_t pos = 0;
    for (int c = 0; c < 5; c++) {
        Py_ssize_t h = (Py_ssize_t)strlen(header[c]);
        if (c) write_ascii(kind, data, &pos, "  ", 2);
        if (c == 0) write_ascii(kind, data, &pos, header[c], h);
        write_fill(kind, data, &pos, ' ', width[c] - h);
        if (c) write_ascii(kind, data, &pos, header[c], h);
    }
    write_ascii(kind, data, &pos, "\n", 1);
    for (int c = 0; c < 6; c++) {
        if (c == 5 && !width[5]) break;
        if (c) write_ascii(kind, data, &pos, "  ", 2);
        write_fill(kind, data, &pos, '-', width[c]);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int held = PyFloat_AS_DOUBLE(item[3][i]) > 0;
        write_ascii(kind, data, &pos, "\n", 1);
        if (held && color) write_ascii(kind, data, &pos, RED, LEN(RED));
        Py_ssize_t k = PyUnicode_GET_LENGTH(key[i]);
        if (PyUnicode_CopyCharacters(out, pos, key[i], 0, k) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        pos += k;
        write_fill(kind, data, &pos, ' ', width[0] - k);
        for (int c = 0; c < 4; c++) {
            int len = lens[i * 4 + c];
            write_ascii(kind, data, &pos, "  ", 2);
            write_fill(kind, data, &pos, ' ', width[c + 1] - len);
            write_ascii(kind, data, &pos, cells + (i * 4 + c) * CELL, len);
        }
        if (held) write_ascii(kind, data, &pos, "  HELD", 6);
        if (held && color) write_ascii(kind, data, &pos, RESET, LEN(RESET));
    }
    if (pos != total) {
        Py_CLEAR(out);
        PyErr_SetString(PyExc_SystemError, "table_lanes: length mismatch");
        goto done;
    }
    PyObject *pair = Py_BuildValue("(Nn)", out, held_count);
    out = pair;
    goto done;
fallback:
    out = Py_NewRef(Py_None);
done:
    PyMem_Free(cells);
    PyMem_Free(lens);
    PyMem_Free(cache.slots);
    return out;
}

static PyMethodDef methods[] = {
    {"json_lanes", json_lanes, METH_VARARGS,
     "json_lanes(keys, demand, allocation, held, admission) -> str | None: the lane entries of "
     "allocation_json, joined by ',\\n'; None when the Python must render them."},
    {"table_lanes", table_lanes, METH_VARARGS,
     "table_lanes(keys, demand, allocation, admission, held, color) -> (str, int) | None: the "
     "LANES table of allocation_table and the count of lanes holding work back; None when the "
     "Python must render it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_render", "The lane part of arklow allocate's output, compiled.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__render(void) { return PyModule_Create(&module); }
