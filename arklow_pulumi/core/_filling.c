/* The progressive filling of arklow_pulumi/core/filling.py (`_fill`), compiled.
 *
 * The same floating-point operations in the same order as the Python reference, so the results
 * are equal to the last bit (tests/core/test_filling_native.py holds them so). Build with
 * -O2 -ffp-contract=off -fno-fast-math (setup.py): no fused multiply-add, no reassociation.
 *
 * - pack(weights, lane_pools, pool_lanes, pools) flattens a compiled topology once into one
 *   bytes object (CSR arrays both ways, weights and costs as doubles).
 * - fill(caps, capacity, packed) runs one filling and returns (allocation, saturated, used),
 *   or None when the Python reference must run instead (a rising lane of weight 0, which raises
 *   there; a NaN capacity or lane level, whose ordering only the Python sort and tuple heap
 *   define). A lane frozen at its cap gets the cap object itself, as in Python.
 *
 * Orders kept from the reference: each pool's slope is summed lane by lane in increasing lane
 * order; lane events are sorted stably by level (a radix sort on order-preserving keys: ties
 * by index, -0.0 tied with 0.0); the pool heap holds (level, pool) pairs compared as
 * Python tuples, at most one per pool, so its order is total and any correct heap pops the same
 * sequence; `max(x, 0.0)` is `0.0 > x ? 0.0 : x` (Python's max keeps the first argument unless
 * the second is greater: -0.0 and NaN stay).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int64_t n, m, nnz_lanes, nnz_pools;
} Header;

/* Layout of a packed topology: Header, weights[n], lane costs[nnz_lanes] (doubles first, so
 * they are 8-aligned), lane_start[n + 1], lane_pool[nnz_lanes], pool_start[m + 1],
 * pool_lane[nnz_pools] (int32). */
typedef struct {
    Header h;
    const double *weights, *cost;
    const int32_t *lane_start, *lane_pool, *pool_start, *pool_lane;
} Packed;

static Py_ssize_t packed_size(const Header *h) {
    return (Py_ssize_t)(sizeof(Header) + 8 * (h->n + h->nnz_lanes) +
                        4 * ((h->n + 1) + h->nnz_lanes + (h->m + 1) + h->nnz_pools));
}

static int unpack(PyObject *obj, Packed *out) {
    if (!PyBytes_CheckExact(obj)) {
        PyErr_SetString(PyExc_TypeError, "packed topology must be bytes");
        return -1;
    }
    const char *buf = PyBytes_AS_STRING(obj);
    Py_ssize_t size = PyBytes_GET_SIZE(obj);
    if (size < (Py_ssize_t)sizeof(Header) || ((uintptr_t)buf & 7) != 0) {
        PyErr_SetString(PyExc_ValueError, "packed topology is malformed");
        return -1;
    }
    memcpy(&out->h, buf, sizeof(Header));
    const Header *h = &out->h;
    if (h->n < 0 || h->m < 0 || h->nnz_lanes < 0 || h->nnz_pools < 0 || h->n >= INT32_MAX ||
        h->m >= INT32_MAX || h->nnz_lanes >= INT32_MAX || h->nnz_pools >= INT32_MAX ||
        packed_size(h) != size) {
        PyErr_SetString(PyExc_ValueError, "packed topology is malformed");
        return -1;
    }
    const char *p = buf + sizeof(Header);
    out->weights = (const double *)p;
    p += 8 * h->n;
    out->cost = (const double *)p;
    p += 8 * h->nnz_lanes;
    out->lane_start = (const int32_t *)p;
    p += 4 * (h->n + 1);
    out->lane_pool = (const int32_t *)p;
    p += 4 * h->nnz_lanes;
    out->pool_start = (const int32_t *)p;
    p += 4 * (h->m + 1);
    out->pool_lane = (const int32_t *)p;
    return 0;
}

/* A number as the Python arithmetic sees it: a float, or an int exact in a double. */
static int as_double(PyObject *obj, double *out) {
    if (PyFloat_CheckExact(obj)) {
        *out = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    if (PyLong_CheckExact(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow == 0 && v >= -(1LL << 53) && v <= (1LL << 53)) {
            *out = (double)v;
            return 0;
        }
        PyErr_Clear();
    }
    return -1;
}

static int as_index(PyObject *obj, int64_t bound, int32_t *out) {
    if (!PyLong_CheckExact(obj)) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow != 0 || v < 0 || v >= bound) {
        PyErr_Clear();
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* An incidence list: a sequence of (index, cost) pairs. */
static PyObject *incidences(PyObject *seq, Py_ssize_t k) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
    return PySequence_Fast(item, "incidences must be sequences");
}

static int pair(PyObject *obj, int64_t bound, int32_t *index, double *cost) {
    if (!PyTuple_CheckExact(obj) || PyTuple_GET_SIZE(obj) != 2) return -1;
    if (as_index(PyTuple_GET_ITEM(obj, 0), bound, index) < 0) return -1;
    if (as_double(PyTuple_GET_ITEM(obj, 1), cost) < 0) return -1;
    return 0;
}

static PyObject *pack_fail(void) {
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError,
                        "topology cannot be packed: weights and costs must be finite numbers, "
                        "incidences (index, cost) pairs in range");
    return NULL;
}

static PyObject *pack(PyObject *self, PyObject *args) {
    PyObject *weights_in, *lane_pools_in, *pool_lanes_in;
    Py_ssize_t m;
    if (!PyArg_ParseTuple(args, "OOOn:pack", &weights_in, &lane_pools_in, &pool_lanes_in, &m))
        return NULL;
    PyObject *weights = PySequence_Fast(weights_in, "weights must be a sequence");
    PyObject *lane_pools = weights ? PySequence_Fast(lane_pools_in, "lane_pools must be a sequence") : NULL;
    PyObject *pool_lanes = lane_pools ? PySequence_Fast(pool_lanes_in, "pool_lanes must be a sequence") : NULL;
    PyObject *result = NULL, *inc = NULL;
    if (!pool_lanes) goto done;
    Header h = {PySequence_Fast_GET_SIZE(weights), m, 0, 0};
    if (PySequence_Fast_GET_SIZE(lane_pools) != h.n || PySequence_Fast_GET_SIZE(pool_lanes) != m ||
        m < 0 || h.n >= INT32_MAX || m >= INT32_MAX) {
        pack_fail();
        goto done;
    }
    for (Py_ssize_t i = 0; i < h.n; i++) {
        if (!(inc = incidences(lane_pools, i))) goto done;
        h.nnz_lanes += PySequence_Fast_GET_SIZE(inc);
        Py_CLEAR(inc);
    }
    for (Py_ssize_t p = 0; p < m; p++) {
        if (!(inc = incidences(pool_lanes, p))) goto done;
        h.nnz_pools += PySequence_Fast_GET_SIZE(inc);
        Py_CLEAR(inc);
    }
    if (h.nnz_lanes >= INT32_MAX || h.nnz_pools >= INT32_MAX) {
        pack_fail();
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, packed_size(&h));
    if (!result) goto done;
    char *buf = PyBytes_AS_STRING(result);
    memcpy(buf, &h, sizeof(Header));
    Packed pk;
    if (unpack(result, &pk) < 0) goto fail;
    double *w = (double *)pk.weights, *cost = (double *)pk.cost;
    int32_t *lane_start = (int32_t *)pk.lane_start, *lane_pool = (int32_t *)pk.lane_pool;
    int32_t *pool_start = (int32_t *)pk.pool_start, *pool_lane = (int32_t *)pk.pool_lane;
    int32_t k = 0;
    for (Py_ssize_t i = 0; i < h.n; i++) {
        if (as_double(PySequence_Fast_GET_ITEM(weights, i), &w[i]) < 0 || !isfinite(w[i]))
            goto fail;
        lane_start[i] = k;
        if (!(inc = incidences(lane_pools, i))) goto fail;
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(inc); j++, k++) {
            if (pair(PySequence_Fast_GET_ITEM(inc, j), m, &lane_pool[k], &cost[k]) < 0 ||
                !isfinite(cost[k]))
                goto fail;
        }
        Py_CLEAR(inc);
    }
    lane_start[h.n] = k;
    k = 0;
    for (Py_ssize_t p = 0; p < m; p++) {
        pool_start[p] = k;
        if (!(inc = incidences(pool_lanes, p))) goto fail;
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(inc); j++, k++) {
            double unused;
            if (pair(PySequence_Fast_GET_ITEM(inc, j), h.n, &pool_lane[k], &unused) < 0)
                goto fail;
        }
        Py_CLEAR(inc);
    }
    pool_start[m] = k;
    goto done;
fail:
    Py_CLEAR(result);
    pack_fail();
done:
    Py_XDECREF(inc);
    Py_XDECREF(weights);
    Py_XDECREF(lane_pools);
    Py_XDECREF(pool_lanes);
    return result;
}

/* ---- the pool heap: (level, pool) pairs in Python tuple order (levels never NaN here) ---- */

typedef struct {
    double key;
    int32_t pool;
} Entry;

static inline int entry_lt(Entry a, Entry b) {
    return a.key == b.key ? a.pool < b.pool : a.key < b.key;
}

/* heapq's _siftdown and _siftup. */
static void sift_down(Entry *heap, Py_ssize_t start, Py_ssize_t pos) {
    Entry item = heap[pos];
    while (pos > start) {
        Py_ssize_t parent = (pos - 1) >> 1;
        if (entry_lt(item, heap[parent])) {
            heap[pos] = heap[parent];
            pos = parent;
            continue;
        }
        break;
    }
    heap[pos] = item;
}

static void sift_up(Entry *heap, Py_ssize_t size, Py_ssize_t pos) {
    Py_ssize_t start = pos;
    Entry item = heap[pos];
    Py_ssize_t child = 2 * pos + 1;
    while (child < size) {
        Py_ssize_t right = child + 1;
        if (right < size && !entry_lt(heap[child], heap[right])) child = right;
        heap[pos] = heap[child];
        pos = child;
        child = 2 * pos + 1;
    }
    heap[pos] = item;
    sift_down(heap, start, pos);
}

static void heap_pop(Entry *heap, Py_ssize_t *size) {
    Entry last = heap[--*size];
    if (*size > 0) {
        heap[0] = last;
        sift_up(heap, *size, 0);
    }
}

typedef struct {
    const Packed *pk;
    const double *caps, *capacity;
    double *alloc, *fixed, *slope;
    int64_t *active;
    char *frozen, *at_cap, *saturated;
    Entry *heap;
    Py_ssize_t heap_size;
} State;

/* `_next_pool`: the pool that saturates next, its stale entries dropped or refreshed. */
static int next_pool(State *s, Entry *out) {
    while (s->heap_size > 0) {
        Entry top = s->heap[0];
        int32_t p = top.pool;
        if (s->saturated[p] || s->active[p] == 0 || s->slope[p] <= 0) {
            heap_pop(s->heap, &s->heap_size);
            continue;
        }
        double room = s->capacity[p] - s->fixed[p];
        double current = (0.0 > room ? 0.0 : room) / s->slope[p];
        if (current > top.key) {
            s->heap[0].key = current; /* heapreplace(heap, (current, p)) */
            sift_up(s->heap, s->heap_size, 0);
            continue;
        }
        *out = top;
        return 1;
    }
    return 0;
}

static void freeze(State *s, Py_ssize_t i, double value) {
    const Packed *pk = s->pk;
    double w = pk->weights[i];
    s->frozen[i] = 1;
    s->alloc[i] = value;
    for (int32_t k = pk->lane_start[i]; k < pk->lane_start[i + 1]; k++) {
        int32_t q = pk->lane_pool[k];
        double c = pk->cost[k];
        s->fixed[q] += value * c;
        s->slope[q] -= w * c;
        s->active[q] -= 1;
    }
}

/* Stable sort of lane indices by level (what `sorted(rising, key=lane_level)` gives: ties in
 * index order, -0.0 tied with 0.0; no NaN here). An LSD radix sort, stable by construction, on
 * each level's bits mapped to an unsigned key in the same order (negative levels flipped whole,
 * the others' sign bit set; -0.0 read as 0.0). Bytes every key shares are skipped. */
static uint64_t order_key(double x) {
    uint64_t u;
    if (x == 0.0) x = 0.0;
    memcpy(&u, &x, sizeof u);
    return (u >> 63) ? ~u : u | (1ULL << 63);
}

static void sort_by_level(int32_t *order, int32_t *tmp, uint64_t *keys, uint64_t *keys_tmp,
                          Py_ssize_t count, const double *level) {
    Py_ssize_t counts[8][256] = {{0}};
    for (Py_ssize_t k = 0; k < count; k++) {
        uint64_t key = keys[k] = order_key(level[order[k]]);
        for (int b = 0; b < 8; b++) counts[b][(key >> (8 * b)) & 255]++;
    }
    for (int b = 0; b < 8; b++) {
        Py_ssize_t *c = counts[b], total = 0;
        int shared = 0;
        for (int d = 0; d < 256; d++) {
            if (c[d] == count) shared = 1;
            Py_ssize_t here = c[d];
            c[d] = total;
            total += here;
        }
        if (shared) continue;
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t at = c[(keys[k] >> (8 * b)) & 255]++;
            keys_tmp[at] = keys[k];
            tmp[at] = order[k];
        }
        memcpy(keys, keys_tmp, sizeof(uint64_t) * count);
        memcpy(order, tmp, sizeof(int32_t) * count);
    }
}

static PyObject *build_result(PyObject *caps, const State *s, Py_ssize_t n, Py_ssize_t m) {
    PyObject *alloc = PyList_New(n), *saturated = PyList_New(m), *used = PyList_New(m);
    if (!alloc || !saturated || !used) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v;
        if (s->at_cap[i]) {
            v = PySequence_Fast_GET_ITEM(caps, i);
            Py_INCREF(v);
        } else if (!(v = PyFloat_FromDouble(s->alloc[i]))) {
            goto fail;
        }
        PyList_SET_ITEM(alloc, i, v);
    }
    for (Py_ssize_t p = 0; p < m; p++) {
        PyObject *full = s->saturated[p] ? Py_True : Py_False;
        Py_INCREF(full);
        PyList_SET_ITEM(saturated, p, full);
        PyObject *u = PyFloat_FromDouble(s->fixed[p]);
        if (!u) goto fail;
        PyList_SET_ITEM(used, p, u);
    }
    return Py_BuildValue("(NNN)", alloc, saturated, used);
fail:
    Py_XDECREF(alloc);
    Py_XDECREF(saturated);
    Py_XDECREF(used);
    return NULL;
}

static int run(State *s, const double *caps_d, Py_ssize_t n, Py_ssize_t m, char *scratch,
               int *fallback) {
    const Packed *pk = s->pk;
    double *lane_level = (double *)scratch;
    int32_t *order = (int32_t *)(lane_level + n);
    int32_t *tmp = order + n;
    uint64_t *keys = (uint64_t *)(tmp + n); /* 2n: the sort's keys and their buffer */
    Py_ssize_t rising = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(caps_d[i] > 0)) continue; /* the others never count anywhere */
        double w = pk->weights[i];
        if (w == 0.0) { /* ZeroDivisionError in the reference */
            *fallback = 1;
            return 0;
        }
        s->frozen[i] = 0;
        lane_level[i] = caps_d[i] / w;
        if (isnan(lane_level[i])) {
            *fallback = 1;
            return 0;
        }
        order[rising++] = (int32_t)i;
        for (int32_t k = pk->lane_start[i]; k < pk->lane_start[i + 1]; k++) {
            int32_t q = pk->lane_pool[k];
            s->slope[q] += w * pk->cost[k];
            s->active[q] += 1;
        }
    }
    if (rising == 0) return 0;
    s->heap_size = 0;
    for (Py_ssize_t p = 0; p < m; p++) {
        if (s->active[p] && s->slope[p] > 0) {
            Entry e = {s->capacity[p] / s->slope[p], (int32_t)p};
            s->heap[s->heap_size++] = e;
        }
    }
    for (Py_ssize_t i = s->heap_size / 2; i-- > 0;) sift_up(s->heap, s->heap_size, i);
    sort_by_level(order, tmp, keys, keys + n, rising, lane_level);
    Py_ssize_t next = 0;
    double level = 0.0;
    for (;;) {
        Entry pool, again;
        int found = next_pool(s, &pool);
        double bound = found ? pool.key : INFINITY;
        /* Lane events up to the next pool's (lower-bound) level. */
        while (next < rising && lane_level[order[next]] <= bound) {
            Py_ssize_t i = order[next++];
            if (!s->frozen[i]) {
                s->at_cap[i] = 1;
                freeze(s, i, caps_d[i]);
            }
        }
        if (!found) break;
        /* Lanes frozen above may have moved this pool's level: look again. The entry is the
         * same only if unchanged (a refreshed level is strictly higher). */
        if (!next_pool(s, &again) || again.pool != pool.pool || !(again.key == pool.key))
            continue;
        heap_pop(s->heap, &s->heap_size);
        if (pool.key > level) level = pool.key;
        int32_t p = pool.pool;
        s->saturated[p] = 1;
        for (int32_t k = pk->pool_start[p]; k < pk->pool_start[p + 1]; k++) {
            int32_t j = pk->pool_lane[k];
            if (s->frozen[j]) continue;
            double value = pk->weights[j] * level;
            if (value > caps_d[j]) {
                value = caps_d[j];
                s->at_cap[j] = 1;
            }
            freeze(s, j, value);
        }
    }
    return 0;
}

static PyObject *fill(PyObject *self, PyObject *args) {
    PyObject *caps_in, *capacity_in, *packed;
    if (!PyArg_ParseTuple(args, "OOO:fill", &caps_in, &capacity_in, &packed)) return NULL;
    Packed pk;
    if (unpack(packed, &pk) < 0) return NULL;
    Py_ssize_t n = pk.h.n, m = pk.h.m;
    PyObject *caps = PySequence_Fast(caps_in, "caps must be a sequence");
    if (!caps) return NULL;
    PyObject *capacity = PySequence_Fast(capacity_in, "capacity must be a sequence");
    if (!capacity) {
        Py_DECREF(caps);
        return NULL;
    }
    PyObject *result = NULL;
    /* one block: doubles (caps, capacity, alloc, fixed, slope, lane levels), int64 active,
     * heap entries, int32 order and merge buffer, then the flags */
    size_t doubles = 6 * (size_t)n + 3 * (size_t)m;
    size_t bytes = 8 * doubles + 8 * (size_t)m + sizeof(Entry) * (size_t)m + 8 * (size_t)n +
                   (size_t)n * 2 + (size_t)m + 16;
    char *block = NULL;
    if (PySequence_Fast_GET_SIZE(caps) != n || PySequence_Fast_GET_SIZE(capacity) != m) {
        PyErr_SetString(PyExc_ValueError, "caps and capacity do not match the packed topology");
        goto done;
    }
    block = PyMem_Calloc(1, bytes);
    if (!block) {
        PyErr_NoMemory();
        goto done;
    }
    double *caps_d = (double *)block;
    double *capacity_d = caps_d + n;
    State s = {&pk, caps_d, capacity_d};
    s.alloc = capacity_d + m;
    s.fixed = s.alloc + n;
    s.slope = s.fixed + m;
    char *scratch = (char *)(s.slope + m); /* lane levels, order and its buffer, sort keys */
    s.active = (int64_t *)(scratch + 8 * n + 8 * n + 16 * n);
    s.heap = (Entry *)(s.active + m);
    s.frozen = (char *)(s.heap + m);
    s.at_cap = s.frozen + n;
    s.saturated = s.at_cap + n;
    int fallback = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (as_double(PySequence_Fast_GET_ITEM(caps, i), &caps_d[i]) < 0) {
            fallback = 1;
            break;
        }
    }
    for (Py_ssize_t p = 0; p < m && !fallback; p++) {
        if (as_double(PySequence_Fast_GET_ITEM(capacity, p), &capacity_d[p]) < 0 ||
            isnan(capacity_d[p]))
            fallback = 1;
    }
    if (!fallback) {
        memset(s.frozen, 1, (size_t)n);
        run(&s, caps_d, n, m, scratch, &fallback);
    }
    if (fallback) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = build_result(caps, &s, n, m);
    }
done:
    PyMem_Free(block);
    Py_DECREF(caps);
    Py_DECREF(capacity);
    return result;
}

/* Each pool's demand, `Σ cap × cost` over its lanes, added up lane by lane in increasing lane
 * order as allocating._pool_results does (a lane whose cap is 0 adds nothing, not even -0.0
 * or NaN products). None when a cap is not a plain number. */
static PyObject *pool_demand(PyObject *self, PyObject *args) {
    PyObject *caps_in, *packed;
    if (!PyArg_ParseTuple(args, "OO:pool_demand", &caps_in, &packed)) return NULL;
    Packed pk;
    if (unpack(packed, &pk) < 0) return NULL;
    PyObject *caps = PySequence_Fast(caps_in, "caps must be a sequence");
    if (!caps) return NULL;
    PyObject *result = NULL;
    double *demand = NULL;
    Py_ssize_t n = pk.h.n, m = pk.h.m;
    if (PySequence_Fast_GET_SIZE(caps) != n) {
        PyErr_SetString(PyExc_ValueError, "caps do not match the packed topology");
        goto done;
    }
    if (!(demand = PyMem_Calloc((size_t)m + 1, sizeof(double)))) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double e;
        if (as_double(PySequence_Fast_GET_ITEM(caps, i), &e) < 0) {
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
        if (e == 0.0) continue;
        for (int32_t k = pk.lane_start[i]; k < pk.lane_start[i + 1]; k++)
            demand[pk.lane_pool[k]] += e * pk.cost[k];
    }
    if (!(result = PyList_New(m))) goto done;
    for (Py_ssize_t p = 0; p < m; p++) {
        PyObject *v = PyFloat_FromDouble(demand[p]);
        if (!v) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, p, v);
    }
done:
    PyMem_Free(demand);
    Py_DECREF(caps);
    return result;
}

/* allocating._fillable: set to 0.0 the room of each lane that draws on a pool with no residual
 * capacity left; whether any lane still has room. None (room untouched) when a value is not a
 * plain number. */
static PyObject *fillable(PyObject *self, PyObject *args) {
    PyObject *room, *residual_in, *packed;
    if (!PyArg_ParseTuple(args, "O!OO:fillable", &PyList_Type, &room, &residual_in, &packed))
        return NULL;
    Packed pk;
    if (unpack(packed, &pk) < 0) return NULL;
    PyObject *residual = PySequence_Fast(residual_in, "residual must be a sequence");
    if (!residual) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = pk.h.n, m = pk.h.m;
    double *left = NULL, *r = NULL;
    if (PyList_GET_SIZE(room) != n || PySequence_Fast_GET_SIZE(residual) != m) {
        PyErr_SetString(PyExc_ValueError, "room and residual do not match the packed topology");
        goto done;
    }
    left = PyMem_Malloc(sizeof(double) * ((size_t)m + (size_t)n + 1));
    if (!left) {
        PyErr_NoMemory();
        goto done;
    }
    r = left + m;
    int plain = 1;
    for (Py_ssize_t p = 0; p < m && plain; p++)
        plain = as_double(PySequence_Fast_GET_ITEM(residual, p), &left[p]) == 0;
    for (Py_ssize_t i = 0; i < n && plain; i++)
        plain = as_double(PyList_GET_ITEM(room, i), &r[i]) == 0;
    if (!plain) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    int any_room = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(r[i] > 0)) continue;
        int blocked = 0;
        for (int32_t k = pk.lane_start[i]; k < pk.lane_start[i + 1]; k++) {
            if (left[pk.lane_pool[k]] <= 0) {
                blocked = 1;
                break;
            }
        }
        if (!blocked) {
            any_room = 1;
            continue;
        }
        PyObject *zero = PyFloat_FromDouble(0.0);
        if (!zero) goto done;
        if (PyList_SetItem(room, i, zero) < 0) goto done;
    }
    result = any_room ? Py_True : Py_False;
    Py_INCREF(result);
done:
    PyMem_Free(left);
    Py_DECREF(residual);
    return result;
}

/* allocating._check_demand's common case: True when every demand lane is known and every
 * value a plain number in [0, max_units]; False whenever the Python must look (an unknown lane,
 * a value out of range or not a plain number, a mapping that is not a dict): it then finds
 * and words the problems itself. */
static PyObject *demand_ok(PyObject *self, PyObject *args) {
    PyObject *demand, *known;
    double max_units;
    if (!PyArg_ParseTuple(args, "OOd:demand_ok", &demand, &known, &max_units)) return NULL;
    if (!PyDict_CheckExact(demand) || !PyDict_CheckExact(known)) Py_RETURN_FALSE;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(demand, &pos, &key, &value)) {
        double v;
        if (as_double(value, &v) < 0 || !(0 <= v && v <= max_units)) Py_RETURN_FALSE;
        int found = PyDict_Contains(known, key);
        if (found < 0) return NULL;
        if (!found) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* allocate's first two columns: each lane's demand (`demand.get(key, 0.0)`) and cap
 * (`d if d < limit else limit`), the objects themselves; None when demand is not a dict. */
static PyObject *lane_caps(PyObject *self, PyObject *args) {
    PyObject *demand, *keys_in, *limits_in;
    if (!PyArg_ParseTuple(args, "OOO:lane_caps", &demand, &keys_in, &limits_in)) return NULL;
    if (!PyDict_CheckExact(demand)) Py_RETURN_NONE;
    PyObject *keys = PySequence_Fast(keys_in, "lane keys must be a sequence");
    if (!keys) return NULL;
    PyObject *limits = PySequence_Fast(limits_in, "limits must be a sequence");
    PyObject *zero = PyFloat_FromDouble(0.0), *demands = NULL, *caps = NULL, *result = NULL;
    if (!limits || !zero) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(keys);
    if (PySequence_Fast_GET_SIZE(limits) != n) {
        PyErr_SetString(PyExc_ValueError, "lane keys and limits differ in length");
        goto done;
    }
    if (!(demands = PyList_New(n)) || !(caps = PyList_New(n))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemWithError(demand, PySequence_Fast_GET_ITEM(keys, i));
        if (!d) {
            if (PyErr_Occurred()) goto done;
            d = zero;
        }
        PyObject *limit = PySequence_Fast_GET_ITEM(limits, i);
        int lower;
        if (PyFloat_CheckExact(d) && PyFloat_CheckExact(limit))
            lower = PyFloat_AS_DOUBLE(d) < PyFloat_AS_DOUBLE(limit);
        else if ((lower = PyObject_RichCompareBool(d, limit, Py_LT)) < 0)
            goto done;
        PyObject *cap = lower ? d : limit;
        Py_INCREF(d);
        PyList_SET_ITEM(demands, i, d);
        Py_INCREF(cap);
        PyList_SET_ITEM(caps, i, cap);
    }
    result = PyTuple_Pack(2, demands, caps);
done:
    Py_XDECREF(demands);
    Py_XDECREF(caps);
    Py_XDECREF(zero);
    Py_XDECREF(limits);
    Py_DECREF(keys);
    return result;
}

/* allocate's demand check and first two columns in one pass, one lookup per lane: for each lane
 * in order, its demand (`demand.get(key, 0.0)`, the object itself) and cap (`d if d < limit
 * else limit`), when demand_ok would say True: every value found a plain number in
 * [0, max_units], and every demand key a lane (as many found as the dict holds; the caller
 * passes keys without repeats). None whenever the Python must look (demand_ok would say False,
 * or a mapping that is not a dict): it then checks and makes the columns itself. */
static PyObject *checked_caps(PyObject *self, PyObject *args) {
    PyObject *demand, *keys_in, *limits_in;
    double max_units;
    if (!PyArg_ParseTuple(args, "OOOd:checked_caps", &demand, &keys_in, &limits_in, &max_units))
        return NULL;
    if (!PyDict_CheckExact(demand)) Py_RETURN_NONE;
    PyObject *keys = PySequence_Fast(keys_in, "lane keys must be a sequence");
    if (!keys) return NULL;
    PyObject *limits = PySequence_Fast(limits_in, "limits must be a sequence");
    PyObject *zero = PyFloat_FromDouble(0.0), *demands = NULL, *caps = NULL, *result = NULL;
    if (!limits || !zero) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(keys), found = 0;
    if (PySequence_Fast_GET_SIZE(limits) != n) {
        PyErr_SetString(PyExc_ValueError, "lane keys and limits differ in length");
        goto done;
    }
    if (!(demands = PyList_New(n)) || !(caps = PyList_New(n))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemWithError(demand, PySequence_Fast_GET_ITEM(keys, i));
        if (!d) {
            if (PyErr_Occurred()) goto done;
            d = zero;
        } else {
            double v;
            if (as_double(d, &v) < 0 || !(0 <= v && v <= max_units)) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            found++;
        }
        PyObject *limit = PySequence_Fast_GET_ITEM(limits, i);
        int lower;
        if (PyFloat_CheckExact(d) && PyFloat_CheckExact(limit))
            lower = PyFloat_AS_DOUBLE(d) < PyFloat_AS_DOUBLE(limit);
        else if ((lower = PyObject_RichCompareBool(d, limit, Py_LT)) < 0)
            goto done;
        PyObject *cap = lower ? d : limit;
        Py_INCREF(d);
        PyList_SET_ITEM(demands, i, d);
        Py_INCREF(cap);
        PyList_SET_ITEM(caps, i, cap);
    }
    result = found == PyDict_GET_SIZE(demand) ? PyTuple_Pack(2, demands, caps)
                                              : Py_NewRef(Py_None);
done:
    Py_XDECREF(demands);
    Py_XDECREF(caps);
    Py_XDECREF(zero);
    Py_XDECREF(limits);
    Py_DECREF(keys);
    return result;
}

/* ---- allocate's per-lane columns, for lists of plain floats only (None otherwise: the Python
 * then runs its comprehension, whose int and mixed-type arithmetic is its own) ---- */

static int floats(PyObject *seq, Py_ssize_t n) {
    if (!(PyList_CheckExact(seq) || PyTuple_CheckExact(seq)) || PySequence_Fast_GET_SIZE(seq) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyFloat_CheckExact(PySequence_Fast_GET_ITEM(seq, i))) return 0;
    return 1;
}

#define ITEM(seq, i) PySequence_Fast_GET_ITEM(seq, i)
#define F(seq, i) PyFloat_AS_DOUBLE(ITEM(seq, i))

/* Set item i of a new list: the object `keep` itself if not NULL, else a new float. */
static int put(PyObject *out, Py_ssize_t i, PyObject *keep, double value) {
    PyObject *v = keep;
    if (v)
        Py_INCREF(v);
    else if (!(v = PyFloat_FromDouble(value)))
        return -1;
    PyList_SET_ITEM(out, i, v);
    return 0;
}

enum { ACTIVE_ROOM, IDLE_ROOM, SUM, CLAMP, HELD };

/* ACTIVE_ROOM(demands, limits, alloc): `limit - a if d > 0 and limit > a else 0.0`;
 * IDLE_ROOM(demands, limits): `limit if d <= 0 else 0.0`; SUM(a, b): `a + b`;
 * CLAMP(admitted, limits): `a if a < limit else limit`; HELD(caps, alloc):
 * `h if (h := cap - a) > 0 else 0.0`. */
static PyObject *column(int op, PyObject *x, PyObject *y, PyObject *z) {
    if (!PyList_CheckExact(x)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(x); /* x a list; y, z lists or tuples */
    if (!floats(x, n) || !floats(y, n) || (z && !floats(z, n))) Py_RETURN_NONE;
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int bad;
        double a = F(x, i), b = F(y, i);
        switch (op) {
        case ACTIVE_ROOM: {
            double alloc = F(z, i);
            bad = put(out, i, NULL, a > 0 && b > alloc ? b - alloc : 0.0);
            break;
        }
        case IDLE_ROOM:
            bad = a <= 0 ? put(out, i, ITEM(y, i), 0) : put(out, i, NULL, 0.0);
            break;
        case SUM:
            bad = put(out, i, NULL, a + b);
            break;
        case HELD: {
            double h = a - b;
            bad = put(out, i, NULL, h > 0 ? h : 0.0);
            break;
        }
        default: /* CLAMP */
            bad = put(out, i, a < b ? ITEM(x, i) : ITEM(y, i), 0);
        }
        if (bad) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *active_room(PyObject *self, PyObject *args) {
    PyObject *demands, *limits, *alloc;
    if (!PyArg_ParseTuple(args, "OOO:active_room", &demands, &limits, &alloc)) return NULL;
    return column(ACTIVE_ROOM, demands, limits, alloc);
}

static PyObject *idle_room(PyObject *self, PyObject *args) {
    PyObject *demands, *limits;
    if (!PyArg_ParseTuple(args, "OO:idle_room", &demands, &limits)) return NULL;
    return column(IDLE_ROOM, demands, limits, NULL);
}

static PyObject *add(PyObject *self, PyObject *args) {
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:add", &a, &b)) return NULL;
    return column(SUM, a, b, NULL);
}

static PyObject *held(PyObject *self, PyObject *args) {
    PyObject *caps, *alloc;
    if (!PyArg_ParseTuple(args, "OO:held", &caps, &alloc)) return NULL;
    return column(HELD, caps, alloc, NULL);
}

static PyObject *clamp(PyObject *self, PyObject *args) {
    PyObject *admitted, *limits;
    if (!PyArg_ParseTuple(args, "OO:clamp", &admitted, &limits)) return NULL;
    return column(CLAMP, admitted, limits, NULL);
}

/* ---- allocating._compile's lane loop (see _compile_lanes there, the reference) ---- */

static PyObject *pair_of(PyObject *a, PyObject *b) {
    PyObject *t = PyTuple_New(2);
    if (!t) return NULL;
    PyTuple_SET_ITEM(t, 0, Py_NewRef(a));
    PyTuple_SET_ITEM(t, 1, Py_NewRef(b));
    return t;
}

/* The dict behind a mappingproxy (types.MappingProxyType) when it is an exact dict, else NULL
 * (the caller then goes through the mapping protocol). CPython's mappingproxy is a bare object
 * holding its mapping and nothing else; the layout below is that struct's. */
typedef struct {
    PyObject_HEAD
    PyObject *mapping;
} MappingProxy;

static PyObject *dict_behind(PyObject *obj) {
    if (PyDict_CheckExact(obj)) return obj;
    if (!Py_IS_TYPE(obj, &PyDictProxy_Type)) return NULL;
    PyObject *mapping = ((MappingProxy *)obj)->mapping;
    return PyDict_CheckExact(mapping) ? mapping : NULL;
}

/* `mapping.get(key, default)`, a borrowed reference (NULL with an error set on failure); a
 * plain dict (or one behind a mappingproxy) is read directly. */
static PyObject *get_or(PyObject *mapping, PyObject *key, PyObject *dflt, PyObject **owned) {
    static PyObject *s_get;
    *owned = NULL;
    PyObject *d = dict_behind(mapping);
    if (d) {
        PyObject *v = PyDict_GetItemWithError(d, key);
        return v ? v : PyErr_Occurred() ? NULL : dflt;
    }
    if (!s_get && !(s_get = PyUnicode_InternFromString("get"))) return NULL;
    return *owned = PyObject_CallMethodObjArgs(mapping, s_get, key, dflt, NULL);
}

/* `mapping[key]`, a new reference; a plain dict (or one behind a mappingproxy) read directly. */
static PyObject *get_item(PyObject *mapping, PyObject *key) {
    PyObject *d = dict_behind(mapping);
    if (!d) return PyObject_GetItem(mapping, key);
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v) return Py_NewRef(v);
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
    return NULL;
}

static int append_new(PyObject *list, PyObject *item) {
    if (!item) return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

/* compile_lanes(destinations, memberships, pool_index, pools): for each destination in order
 * and each of its lanes in order, the lane's key ('<destination>/<lane>'), weight and limit (the
 * objects themselves), its incidences ((pool, cost) for each of the destination's resources, cost
 * `lane.cost.get(resource, 1.0)`; one tuple shared by the destination's lanes without costs), and
 * each pool's (lane, cost) pairs in lane order. Returns (lane_keys, lane_index, weights, limits,
 * lane_pools, pool_lanes) as tuples (lane_index a dict), equal to the Python's. */
static PyObject *compile_lanes(PyObject *self, PyObject *args) {
    PyObject *dests_in, *memberships, *pool_index;
    Py_ssize_t m;
    if (!PyArg_ParseTuple(args, "OOOn:compile_lanes", &dests_in, &memberships, &pool_index, &m))
        return NULL;
    if (m < 0) {
        PyErr_SetString(PyExc_ValueError, "pools must be >= 0");
        return NULL;
    }
    static PyObject *s_name, *s_resources, *s_lanes, *s_weight, *s_limit, *s_cost;
    if (!s_name) {
        if (!(s_name = PyUnicode_InternFromString("name")) ||
            !(s_resources = PyUnicode_InternFromString("resources")) ||
            !(s_lanes = PyUnicode_InternFromString("lanes")) ||
            !(s_weight = PyUnicode_InternFromString("weight")) ||
            !(s_limit = PyUnicode_InternFromString("limit")) ||
            !(s_cost = PyUnicode_InternFromString("cost"))) {
            Py_CLEAR(s_name);
            return NULL;
        }
    }
    PyObject *dests = PySequence_Fast(dests_in, "destinations must be a sequence");
    if (!dests) return NULL;
    PyObject *keys = PyList_New(0), *index = PyDict_New(), *weights = PyList_New(0);
    PyObject *limits = PyList_New(0), *lane_pools = PyList_New(0), *pool_lists = PyList_New(m);
    PyObject *one = PyFloat_FromDouble(1.0), *result = NULL;
    PyObject *dname = NULL, *resources = NULL, *lanes = NULL, *prefix = NULL, *uniform = NULL;
    PyObject *dpools = NULL, *lane = NULL, *lname = NULL, *cost = NULL, *inc = NULL;
    Py_ssize_t *pidx = NULL;
    if (!keys || !index || !weights || !limits || !lane_pools || !pool_lists || !one) goto done;
    for (Py_ssize_t p = 0; p < m; p++) {
        PyObject *l = PyList_New(0);
        if (!l) goto done;
        PyList_SET_ITEM(pool_lists, p, l);
    }
    Py_ssize_t n_dests = PySequence_Fast_GET_SIZE(dests);
    for (Py_ssize_t d = 0; d < n_dests; d++) {
        PyObject *dest = PySequence_Fast_GET_ITEM(dests, d);
        if (!(dname = PyObject_GetAttr(dest, s_name))) goto done;
        PyObject *res_in = PyObject_GetAttr(dest, s_resources);
        if (!res_in) goto done;
        resources = PySequence_Fast(res_in, "resources must be a sequence");
        Py_DECREF(res_in);
        if (!resources) goto done;
        Py_ssize_t k = PySequence_Fast_GET_SIZE(resources);
        if (!(prefix = PyUnicode_FromFormat("%U/", dname))) goto done;
        /* dest_pools: (pool index object, resource) per resource, and the uniform tuple */
        if (!(dpools = PyTuple_New(k)) || !(uniform = PyTuple_New(k))) goto done;
        PyMem_Free(pidx);
        if (!(pidx = PyMem_New(Py_ssize_t, k ? k : 1))) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t r = 0; r < k; r++) {
            PyObject *res = PySequence_Fast_GET_ITEM(resources, r);
            PyObject *mkey = pair_of(dname, res);
            if (!mkey) goto done;
            PyObject *pool = get_item(memberships, mkey);
            Py_DECREF(mkey);
            if (!pool) goto done;
            PyObject *p = get_item(pool_index, pool);
            Py_DECREF(pool);
            if (!p) goto done;
            PyTuple_SET_ITEM(dpools, r, p);
            pidx[r] = PyLong_AsSsize_t(p);
            if (pidx[r] == -1 && PyErr_Occurred()) goto done;
            if (pidx[r] < 0 || pidx[r] >= m) {
                PyErr_SetString(PyExc_IndexError, "pool index out of range");
                goto done;
            }
            PyObject *u = pair_of(p, one);
            if (!u) goto done;
            PyTuple_SET_ITEM(uniform, r, u);
        }
        PyObject *lanes_in = PyObject_GetAttr(dest, s_lanes);
        if (!lanes_in) goto done;
        lanes = PySequence_Fast(lanes_in, "lanes must be a sequence");
        Py_DECREF(lanes_in);
        if (!lanes) goto done;
        Py_ssize_t n_lanes = PySequence_Fast_GET_SIZE(lanes);
        for (Py_ssize_t j = 0; j < n_lanes; j++) {
            lane = PySequence_Fast_GET_ITEM(lanes, j);
            Py_ssize_t i = PyList_GET_SIZE(keys);
            if (!(lname = PyObject_GetAttr(lane, s_name))) goto done;
            PyObject *key = PyUnicode_Concat(prefix, lname);
            Py_CLEAR(lname);
            if (!key) goto done;
            if (PyList_Append(keys, key) < 0) {
                Py_DECREF(key);
                goto done;
            }
            PyObject *at = PyLong_FromSsize_t(i);
            if (!at) {
                Py_DECREF(key);
                goto done;
            }
            int rc = PyDict_SetItem(index, key, at);
            Py_DECREF(key);
            if (rc < 0) {
                Py_DECREF(at);
                goto done;
            }
            if (append_new(weights, PyObject_GetAttr(lane, s_weight)) < 0 ||
                append_new(limits, PyObject_GetAttr(lane, s_limit)) < 0) {
                Py_DECREF(at);
                goto done;
            }
            if (!(cost = PyObject_GetAttr(lane, s_cost))) {
                Py_DECREF(at);
                goto done;
            }
            PyObject *cost_dict = dict_behind(cost);
            int costed = cost_dict ? PyDict_GET_SIZE(cost_dict) > 0 : PyObject_IsTrue(cost);
            if (costed < 0) {
                Py_DECREF(at);
                goto done;
            }
            if (costed) {
                if (!(inc = PyTuple_New(k))) {
                    Py_DECREF(at);
                    goto done;
                }
                for (Py_ssize_t r = 0; r < k; r++) {
                    PyObject *owned;
                    PyObject *c = get_or(cost, PySequence_Fast_GET_ITEM(resources, r), one, &owned);
                    if (!c) {
                        Py_DECREF(at);
                        goto done;
                    }
                    PyObject *pc = pair_of(PyTuple_GET_ITEM(dpools, r), c);
                    Py_XDECREF(owned);
                    if (!pc) {
                        Py_DECREF(at);
                        goto done;
                    }
                    PyTuple_SET_ITEM(inc, r, pc);
                }
            } else {
                inc = Py_NewRef(uniform);
            }
            Py_CLEAR(cost);
            if (PyList_Append(lane_pools, inc) < 0) {
                Py_DECREF(at);
                goto done;
            }
            for (Py_ssize_t r = 0; r < k; r++) {
                PyObject *c = PyTuple_GET_ITEM(PyTuple_GET_ITEM(inc, r), 1);
                if (append_new(PyList_GET_ITEM(pool_lists, pidx[r]), pair_of(at, c)) < 0) {
                    Py_DECREF(at);
                    goto done;
                }
            }
            Py_CLEAR(inc);
            Py_DECREF(at);
        }
        Py_CLEAR(dname);
        Py_CLEAR(resources);
        Py_CLEAR(lanes);
        Py_CLEAR(prefix);
        Py_CLEAR(dpools);
        Py_CLEAR(uniform);
    }
    PyObject *pool_lanes = PyTuple_New(m);
    if (!pool_lanes) goto done;
    for (Py_ssize_t p = 0; p < m; p++) {
        PyObject *t = PyList_AsTuple(PyList_GET_ITEM(pool_lists, p));
        if (!t) {
            Py_DECREF(pool_lanes);
            goto done;
        }
        PyTuple_SET_ITEM(pool_lanes, p, t);
    }
    PyObject *keys_t = PyList_AsTuple(keys), *weights_t = PyList_AsTuple(weights);
    PyObject *limits_t = PyList_AsTuple(limits), *lane_pools_t = PyList_AsTuple(lane_pools);
    if (keys_t && weights_t && limits_t && lane_pools_t)
        result = PyTuple_Pack(6, keys_t, index, weights_t, limits_t, lane_pools_t, pool_lanes);
    Py_XDECREF(keys_t);
    Py_XDECREF(weights_t);
    Py_XDECREF(limits_t);
    Py_XDECREF(lane_pools_t);
    Py_DECREF(pool_lanes);
done:
    PyMem_Free(pidx);
    Py_XDECREF(inc);
    Py_XDECREF(cost);
    Py_XDECREF(lname);
    Py_XDECREF(dpools);
    Py_XDECREF(uniform);
    Py_XDECREF(prefix);
    Py_XDECREF(lanes);
    Py_XDECREF(resources);
    Py_XDECREF(dname);
    Py_XDECREF(one);
    Py_XDECREF(pool_lists);
    Py_XDECREF(lane_pools);
    Py_XDECREF(limits);
    Py_XDECREF(weights);
    Py_XDECREF(index);
    Py_XDECREF(keys);
    Py_DECREF(dests);
    return result;
}

static PyMethodDef methods[] = {
    {"active_room", active_room, METH_VARARGS,
     "active_room(demands, limits, alloc) -> list | None: each active lane's room to its limit."},
    {"idle_room", idle_room, METH_VARARGS,
     "idle_room(demands, limits) -> list | None: each idle lane's limit, 0.0 for the others."},
    {"add", add, METH_VARARGS, "add(a, b) -> list | None: the sums, item by item."},
    {"held", held, METH_VARARGS,
     "held(caps, alloc) -> list | None: each cap less its allocation, 0.0 when not positive."},
    {"clamp", clamp, METH_VARARGS,
     "clamp(admitted, limits) -> list | None: each item, no more than its limit."},
    {"demand_ok", demand_ok, METH_VARARGS,
     "demand_ok(demand, known, max_units) -> bool: True when the demand needs no closer look."},
    {"checked_caps", checked_caps, METH_VARARGS,
     "checked_caps(demand, keys, limits, max_units) -> (demands, caps) | None: demand_ok and "
     "lane_caps in one pass; None when demand_ok would be False."},
    {"lane_caps", lane_caps, METH_VARARGS,
     "lane_caps(demand, keys, limits) -> (demands, caps) | None: each lane's demand and cap."},
    {"pool_demand", pool_demand, METH_VARARGS,
     "pool_demand(caps, packed) -> list[float] | None: each pool's demand, Σ cap × cost."},
    {"fillable", fillable, METH_VARARGS,
     "fillable(room, residual, packed) -> bool | None: allocating._fillable, in place."},
    {"pack", pack, METH_VARARGS,
     "pack(weights, lane_pools, pool_lanes, pools) -> bytes: a compiled topology, flattened."},
    {"fill", fill, METH_VARARGS,
     "fill(caps, capacity, packed) -> (allocation, saturated, used) | None: one progressive "
     "filling, bit-identical to filling._fill; None when the reference must run instead."},
    {"compile_lanes", compile_lanes, METH_VARARGS,
     "compile_lanes(destinations, memberships, pool_index, pools) -> (lane_keys, lane_index, "
     "weights, limits, lane_pools, pool_lanes): allocating._compile_lanes, compiled."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_filling",
    "Compiled progressive filling (see arklow_pulumi/core/filling.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__filling(void) { return PyModule_Create(&module); }
