/* The SimHash of weighted term hashes (scrapy_simhash.analysis.fingerprint): combine, from the
 * hashes as bytes, and combine_cached, from (term, weight) pairs and a cache of hashes. */
#include "_speedups.h"

#include <math.h>

/* Adds a term of 64-bit hash *hash* and weight *weight* to the sums of a SimHash: the
 * weight times 1000 in double precision, rounded half to even, as int64; sums in int64
 * (wrapping as numpy's do, here by unsigned arithmetic). 0, or -1 when the scaled weight
 * is not finite or not below 2**63 in magnitude. */
static inline int
add_term(uint64_t *set_weight, uint64_t *total, uint64_t hash, double weight)
{
    double scaled = nearbyint(weight * 1000.0);
    if (!(fabs(scaled) < 9223372036854775808.0)) { /* also for NaN */
        return -1;
    }
    uint64_t w = (uint64_t)(int64_t)scaled;
    *total += w;
    for (int bit = 0; bit < 64; bit++) {
        /* w where the bit is set, 0 where not: a mask, no branch. */
        set_weight[bit] += w & (0 - (hash >> bit & 1));
    }
    return 0;
}

/* The fingerprint of the sums: a 1 where the bit's terms weigh more than half the total. */
static PyObject *
fingerprint_of(const uint64_t *set_weight, uint64_t total)
{
    uint64_t fingerprint = 0;
    for (int bit = 0; bit < 64; bit++) {
        if ((int64_t)(set_weight[bit] * 2) > (int64_t)total) {
            fingerprint |= (uint64_t)1 << bit;
        }
    }
    return PyLong_FromUnsignedLongLong(fingerprint);
}

static uint64_t
little_endian(const unsigned char *bytes)
{
    uint64_t hash = 0;
    for (int b = 7; b >= 0; b--) {
        hash = hash << 8 | bytes[b];
    }
    return hash;
}

/* The SimHash of terms whose 64-bit hashes are *rows* (8 bytes each, little-endian) and
 * whose weights are *weights*: what scrapy_simhash.analysis.fingerprint computes with numpy, with
 * the same arithmetic: each weight times 1000 in double precision, rounded half to even,
 * as int64; sums in int64 (wrapping as numpy's do, here by unsigned arithmetic).
 * None when a scaled weight is not finite or not below 2**63 in magnitude. */
PyObject *
speedups_combine(PyObject *module, PyObject *args)
{
    Py_buffer rows;
    PyObject *weights;
    if (!PyArg_ParseTuple(args, "y*O:combine", &rows, &weights)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *seq = PySequence_Fast(weights, "weights must be a sequence");
    if (seq == NULL) {
        goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (rows.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "rows must hold 8 bytes per weight");
        goto done;
    }
    const unsigned char *bytes = rows.buf;
    uint64_t set_weight[64] = {0};
    uint64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double weight = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (weight == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        if (add_term(set_weight, &total, little_endian(bytes + i * 8), weight) < 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    result = fingerprint_of(set_weight, total);
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&rows);
    return result;
}

/* The SimHash of the (term, weight) pairs of the list *pairs*, each term's hash read from
 * the dict *cache* (8 bytes, little-endian): what combine gives for the terms' hashes and
 * weights, without building either sequence. None where the caller is to compute it: a
 * term missing from the cache, a pair that is not a (str, float) tuple, a hash that is not
 * 8 bytes, a weight out of range, no pairs. */
PyObject *
speedups_combine_cached(PyObject *module, PyObject *args)
{
    PyObject *pairs, *cache;
    if (!PyArg_ParseTuple(args, "O!O!:combine_cached", &PyList_Type, &pairs, &PyDict_Type,
                          &cache)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(pairs);
    uint64_t set_weight[64] = {0};
    uint64_t total = 0;
    if (n == 0) {
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)) ||
            !PyFloat_CheckExact(PyTuple_GET_ITEM(pair, 1))) {
            Py_RETURN_NONE;
        }
        /* Borrowed: no Python code runs between the look-up and the read of the row. */
        PyObject *row = PyDict_GetItemWithError(cache, PyTuple_GET_ITEM(pair, 0));
        if (row == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        if (!PyBytes_CheckExact(row) || PyBytes_GET_SIZE(row) != 8) {
            Py_RETURN_NONE;
        }
        double weight = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(pair, 1));
        if (add_term(set_weight, &total, little_endian((const unsigned char *)PyBytes_AS_STRING(row)),
                     weight) < 0) {
            Py_RETURN_NONE;
        }
    }
    return fingerprint_of(set_weight, total);
}
