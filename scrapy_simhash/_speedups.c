/* Compiled forms of scrapy_simhash.words.count_words_python, of the search in
 * scrapy_simhash.nfkc and of the combine in scrapy_simhash.fingerprint: the same results
 * for any input (tests/test_words.py, tests/test_nfkc.py and tests/test_fingerprint.py
 * compare the two forms).
 *
 * The regular expressions it replaces cost more than segmenting the text: the engine's
 * overhead per match and per position dominates on pages of many short words. One pass
 * over the characters here classifies each as Python's `re` does: a word character is
 * one for which str.isalnum() is true, or "_" (sre's SRE_UNI_IS_WORD); a Han character
 * is one of U+4E00..U+9FD5, the range jieba's dictionary covers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

static inline int
is_han(Py_UCS4 ch)
{
    return ch >= 0x4E00 && ch <= 0x9FD5;
}

static inline int
is_word(Py_UCS4 ch)
{
    if (ch < 128) {
        return Py_ISALNUM(ch) || ch == '_';
    }
    return Py_UNICODE_ISALNUM(ch) || ch == '_';
}

/* Whether the word text[start:end] is one that can carry content: a single character
 * only if it is a decimal digit, a longer word only if it is not all underscores. */
static int
is_content_word(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (end - start == 1) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, start);
        return ch != '_' && Py_UNICODE_ISDECIMAL(ch);
    }
    for (Py_ssize_t i = start; i < end; i++) {
        if (PyUnicode_READ(kind, data, i) != '_') {
            return 1;
        }
    }
    return 0;
}

/* counts[word] += 1, for a dict (or Counter) of ints. */
static int
add_one(PyObject *counts, PyObject *word, PyObject *one)
{
    PyObject *old = PyDict_GetItemWithError(counts, word);
    if (old == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        return PyDict_SetItem(counts, word, one);
    }
    PyObject *sum = PyNumber_Add(old, one);
    if (sum == NULL) {
        return -1;
    }
    int status = PyDict_SetItem(counts, word, sum);
    Py_DECREF(sum);
    return status;
}

static PyObject *
count_words(PyObject *module, PyObject *args)
{
    PyObject *text, *counts;
    if (!PyArg_ParseTuple(args, "UO!:count_words", &text, &PyDict_Type, &counts)) {
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *one = PyLong_FromLong(1);
    PyObject *runs = PyList_New(0);
    PyObject *separator = PyUnicode_FromString("\n");
    PyObject *result = NULL;
    if (one == NULL || runs == NULL || separator == NULL) {
        goto done;
    }
    Py_ssize_t i = 0;
    while (i < length) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        Py_ssize_t start = i;
        if (is_han(ch)) {
            while (++i < length && is_han(PyUnicode_READ(kind, data, i))) {
            }
            PyObject *run = PyUnicode_Substring(text, start, i);
            if (run == NULL || PyList_Append(runs, run) < 0) {
                Py_XDECREF(run);
                goto done;
            }
            Py_DECREF(run);
        }
        else if (is_word(ch)) {
            while (++i < length) {
                Py_UCS4 next = PyUnicode_READ(kind, data, i);
                if (is_han(next) || !is_word(next)) {
                    break;
                }
            }
            if (!is_content_word(kind, data, start, i)) {
                continue;
            }
            PyObject *word = PyUnicode_Substring(text, start, i);
            if (word == NULL || add_one(counts, word, one) < 0) {
                Py_XDECREF(word);
                goto done;
            }
            Py_DECREF(word);
        }
        else {
            i++;
        }
    }
    result = PyUnicode_Join(separator, runs);
done:
    Py_XDECREF(one);
    Py_XDECREF(runs);
    Py_XDECREF(separator);
    return result;
}

/* The [start, end) spans of the runs of characters that *table* (a bitmap of the 65,536
 * BMP code points, least significant bit first) marks, and of characters beyond the BMP:
 * what scrapy_simhash.nfkc finds with a regular expression. */
static PyObject *
marked_runs(PyObject *module, PyObject *args)
{
    PyObject *text;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*:marked_runs", &text, &table)) {
        return NULL;
    }
    PyObject *runs = NULL;
    if (table.len != 0x10000 / 8) {
        PyErr_SetString(PyExc_ValueError, "the table must hold 8192 bytes");
        goto done;
    }
    const unsigned char *bits = table.buf;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    runs = PyList_New(0);
    if (runs == NULL) {
        goto done;
    }
#define MARKED(ch) ((ch) > 0xFFFF || (bits[(ch) >> 3] >> ((ch) & 7) & 1))
    Py_ssize_t i = 0;
    while (i < length) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (!MARKED(ch)) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (++i < length) {
            ch = PyUnicode_READ(kind, data, i);
            if (!MARKED(ch)) {
                break;
            }
        }
        PyObject *span = Py_BuildValue("(nn)", start, i);
        if (span == NULL || PyList_Append(runs, span) < 0) {
            Py_XDECREF(span);
            Py_CLEAR(runs);
            goto done;
        }
        Py_DECREF(span);
    }
#undef MARKED
done:
    PyBuffer_Release(&table);
    return runs;
}

/* The SimHash of terms whose 64-bit hashes are *rows* (8 bytes each, little-endian) and
 * whose weights are *weights*: what scrapy_simhash.fingerprint computes with numpy, with
 * the same arithmetic: each weight times 1000 in double precision, rounded half to even,
 * as int64; sums in int64 (wrapping as numpy's do, here by unsigned arithmetic).
 * None when a scaled weight is not finite or not below 2**63 in magnitude. */
static PyObject *
combine(PyObject *module, PyObject *args)
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
        double scaled = nearbyint(weight * 1000.0);
        if (!(fabs(scaled) < 9223372036854775808.0)) { /* also for NaN */
            result = Py_NewRef(Py_None);
            goto done;
        }
        uint64_t w = (uint64_t)(int64_t)scaled;
        total += w;
        uint64_t hash = 0;
        for (int b = 7; b >= 0; b--) {
            hash = hash << 8 | bytes[i * 8 + b];
        }
        for (int bit = 0; bit < 64; bit++) {
            /* w where the bit is set, 0 where not: a mask, no branch. */
            set_weight[bit] += w & (0 - (hash >> bit & 1));
        }
    }
    uint64_t fingerprint = 0;
    for (int bit = 0; bit < 64; bit++) {
        if ((int64_t)(set_weight[bit] * 2) > (int64_t)total) {
            fingerprint |= (uint64_t)1 << bit;
        }
    }
    result = PyLong_FromUnsignedLongLong(fingerprint);
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&rows);
    return result;
}

/* counts[word] += 1 for each word of the list *words* other than single characters. */
static PyObject *
count_long_words(PyObject *module, PyObject *args)
{
    PyObject *words, *counts;
    if (!PyArg_ParseTuple(args, "O!O!:count_long_words", &PyList_Type, &words, &PyDict_Type,
                          &counts)) {
        return NULL;
    }
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(words); i++) {
        PyObject *word = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            Py_DECREF(one);
            return NULL;
        }
        if (PyUnicode_GET_LENGTH(word) != 1 && add_one(counts, word, one) < 0) {
            Py_DECREF(one);
            return NULL;
        }
    }
    Py_DECREF(one);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"count_long_words", count_long_words, METH_VARARGS,
     "count_long_words(words, counts): counts[word] += 1 for each word of the list words "
     "other than single characters."},
    {"combine", combine, METH_VARARGS,
     "combine(rows, weights) -> the SimHash of 8-byte little-endian hashes and their "
     "weights, or None for a weight out of range."},
    {"marked_runs", marked_runs, METH_VARARGS,
     "marked_runs(text, table) -> [(start, end), ...] of the runs of characters marked "
     "in table (8192 bytes, a bit per BMP code point) or beyond the BMP."},
    {"count_words", count_words, METH_VARARGS,
     "count_words(text, counts) -> Han runs of text joined by line breaks; the other "
     "words of text that can carry content counted into the dict counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
