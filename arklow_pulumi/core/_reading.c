/* The lane loop of arklow_pulumi/core/reading.py (`_lanes` and `_costs`), compiled.
 *
 * read_lanes(destination, value, resources, lane_type, setters, empty, limits) reads one
 * destination's `lanes` field of a parsed document with the same checks as the Python, in the
 * same order of outcomes: it returns (lanes, plain) when every lane is plainly valid, where
 * `lanes` is the tuple of Lane objects the Python builds (slots set directly, the same objects
 * for names and floats, ints made floats, a cost dict wrapped in a mappingproxy, `empty` for no
 * cost) and `plain` says whether the lane part of validating.destination_is_plain holds (lane
 * names unique in the destination, none with '/', every cost resource one of `resources`); and
 * None whenever the Python would give up (raise _Defer), so the caller defers too.
 *
 * `setters` are Lane's five slot descriptors in the order (destination, name, limit, weight,
 * cost); `limits` is (max_name_length, max_units, min_factor, max_factor).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_ssize_t max_name;
    double max_units, min_factor, max_factor;
} Limits;

/* type(v) is str and 0 < len(v) <= max_name and v.isprintable() */
static int good_name(PyObject *v, Py_ssize_t max_name) {
    if (!PyUnicode_CheckExact(v)) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(v);
    if (n <= 0 || n > max_name) return 0;
    if (PyUnicode_IS_ASCII(v)) {
        const Py_UCS1 *s = PyUnicode_1BYTE_DATA(v);
        for (Py_ssize_t i = 0; i < n; i++)
            if (s[i] < 0x20 || s[i] > 0x7e) return 0;
        return 1;
    }
    int kind = PyUnicode_KIND(v);
    const void *data = PyUnicode_DATA(v);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISPRINTABLE(PyUnicode_READ(kind, data, i))) return 0;
    return 1;
}

/* (type(v) is float or type(v) is int) and low <= v <= high: 1 yes, 0 no, -1 error. An int is
 * compared exactly, as Python compares an int with a float. */
static int in_range(PyObject *v, double low, double high) {
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        return low <= x && x <= high;
    }
    if (!PyLong_CheckExact(v)) return 0;
    PyObject *lo = PyFloat_FromDouble(low), *hi = PyFloat_FromDouble(high);
    int ok = -1;
    if (lo && hi) {
        int a = PyObject_RichCompareBool(lo, v, Py_LE);
        int b = a > 0 ? PyObject_RichCompareBool(v, hi, Py_LE) : a;
        ok = a < 0 || b < 0 ? -1 : (a && b);
    }
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    return ok;
}

/* the number itself for a float, float(v) for an int (a new reference) */
static PyObject *as_float(PyObject *v) {
    return PyFloat_CheckExact(v) ? Py_NewRef(v) : PyNumber_Float(v);
}

static int has_slash(PyObject *name) {
    return PyUnicode_FindChar(name, '/', 0, PyUnicode_GET_LENGTH(name), 1) >= 0;
}

static PyObject *s_name, *s_limit, *s_weight, *s_cost;

/* _costs: a mappingproxy of the checked costs, `empty` for {}; NULL without an error when the
 * Python would defer. *plain is cleared when a cost resource is not one of `known`. */
static PyObject *costs(PyObject *value, PyObject *empty, PyObject *known, const Limits *lim,
                       int *plain) {
    if (!PyDict_CheckExact(value)) return NULL;
    if (PyDict_GET_SIZE(value) == 0) return Py_NewRef(empty);
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    Py_ssize_t pos = 0;
    PyObject *resource, *cost;
    while (PyDict_Next(value, &pos, &resource, &cost)) {
        if (!good_name(resource, lim->max_name)) goto defer;
        int ok = in_range(cost, lim->min_factor, lim->max_factor);
        if (ok <= 0) goto defer;
        if (*plain) {
            int found = PySet_Contains(known, resource);
            if (found < 0) goto defer;
            if (!found) *plain = 0;
        }
        PyObject *c = as_float(cost);
        if (!c) goto defer;
        int rc = PyDict_SetItem(out, resource, c);
        Py_DECREF(c);
        if (rc < 0) goto defer;
    }
    PyObject *proxy = PyDictProxy_New(out);
    Py_DECREF(out);
    return proxy;
defer:
    Py_DECREF(out);
    return NULL;
}

static int set_slot(PyObject *descr, PyObject *obj, PyObject *value) {
    descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
    if (!set) {
        PyErr_SetString(PyExc_TypeError, "a Lane field is not a settable slot");
        return -1;
    }
    return set(descr, obj, value);
}

static PyObject *read_lanes(PyObject *self, PyObject *args) {
    PyObject *destination, *value, *resources, *lane_type, *setters, *empty;
    Limits lim;
    if (!PyArg_ParseTuple(args, "UOOOOO(nddd):read_lanes", &destination, &value, &resources,
                          &lane_type, &setters, &empty, &lim.max_name, &lim.max_units,
                          &lim.min_factor, &lim.max_factor))
        return NULL;
    if (!PyType_Check(lane_type) || !PyTuple_CheckExact(setters) ||
        PyTuple_GET_SIZE(setters) != 5) {
        PyErr_SetString(PyExc_TypeError, "read_lanes: a Lane type and its five slot setters");
        return NULL;
    }
    if (value == Py_None) return Py_BuildValue("(()O)", Py_True);
    if (!PyList_CheckExact(value)) Py_RETURN_NONE;
    PyTypeObject *type = (PyTypeObject *)lane_type;
    Py_ssize_t n = PyList_GET_SIZE(value);
    PyObject *lanes = PyTuple_New(n), *known = PySet_New(resources), *names = PySet_New(NULL);
    PyObject *one = PyFloat_FromDouble(1.0), *result = NULL;
    if (!lanes || !known || !names || !one) goto done;
    int plain = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *doc = PyList_GET_ITEM(value, i);
        if (!PyDict_CheckExact(doc)) goto defer;
        PyObject *name = PyDict_GetItemWithError(doc, s_name);
        PyObject *limit = PyDict_GetItemWithError(doc, s_limit);
        PyObject *weight = PyDict_GetItemWithError(doc, s_weight);
        PyObject *cost = PyDict_GetItemWithError(doc, s_cost);
        if (PyErr_Occurred()) goto done;
        /* no other key (`doc.keys() <= _LANE`): as many of the four found as the dict holds */
        if ((name != NULL) + (limit != NULL) + (weight != NULL) + (cost != NULL) !=
            PyDict_GET_SIZE(doc))
            goto defer;
        if (!name || !limit || !good_name(name, lim.max_name)) goto defer;
        int ok = in_range(limit, 0.0, lim.max_units);
        if (ok < 0) goto done;
        if (!ok) goto defer;
        if (weight != NULL && weight != Py_None) {
            if ((ok = in_range(weight, lim.min_factor, lim.max_factor)) < 0) goto done;
            if (!ok) goto defer;
        }
        PyObject *cost_map;
        if (cost == NULL || cost == Py_None) {
            cost_map = Py_NewRef(empty);
        } else if (!(cost_map = costs(cost, empty, known, &lim, &plain))) {
            if (PyErr_Occurred()) goto done;
            goto defer;
        }
        if (plain) {
            int seen = PySet_Contains(names, name);
            if (seen < 0 || PySet_Add(names, name) < 0) {
                Py_DECREF(cost_map);
                goto done;
            }
            if (seen || has_slash(name)) plain = 0;
        }
        PyObject *limit_f = as_float(limit);
        PyObject *weight_f = weight == NULL || weight == Py_None ? Py_NewRef(one)
                                                                 : as_float(weight);
        PyObject *lane = type->tp_alloc(type, 0);
        int rc = -1;
        if (limit_f && weight_f && lane) {
            PyObject *fields[5] = {destination, name, limit_f, weight_f, cost_map};
            rc = 0;
            for (int f = 0; f < 5 && rc == 0; f++)
                rc = set_slot(PyTuple_GET_ITEM(setters, f), lane, fields[f]);
        }
        Py_XDECREF(limit_f);
        Py_XDECREF(weight_f);
        Py_DECREF(cost_map);
        if (rc < 0) {
            Py_XDECREF(lane);
            goto done;
        }
        PyTuple_SET_ITEM(lanes, i, lane);
    }
    result = Py_BuildValue("(OO)", lanes, plain ? Py_True : Py_False);
    goto done;
defer:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(one);
    Py_XDECREF(names);
    Py_XDECREF(known);
    Py_XDECREF(lanes);
    return result;
}

static PyMethodDef methods[] = {
    {"read_lanes", read_lanes, METH_VARARGS,
     "read_lanes(destination, value, resources, lane_type, setters, empty, limits) -> "
     "(lanes, plain) | None: reading._lanes, compiled; None when the Python would defer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_reading",
    "The fast document reader's lane loop, compiled (see arklow_pulumi/core/reading.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__reading(void) {
    if (!(s_name = PyUnicode_InternFromString("name")) ||
        !(s_limit = PyUnicode_InternFromString("limit")) ||
        !(s_weight = PyUnicode_InternFromString("weight")) ||
        !(s_cost = PyUnicode_InternFromString("cost")))
        return NULL;
    return PyModule_Create(&module);
}
