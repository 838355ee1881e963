/* Runs of characters marked in a bitmap of the BMP (scrapy_simhash.analysis.nfkc): marked_runs
 * and normalize_runs. */
#include "_speedups.h"

/* A bitmap of the 65,536 BMP code points (least significant bit first) from a buffer,
 * or NULL and ValueError when it does not hold 8192 bytes. */
static const unsigned char *
bmp_bits(Py_buffer *table)
{
    if (table->len != 0x10000 / 8) {
        PyErr_SetString(PyExc_ValueError, "the table must hold 8192 bytes");
        return NULL;
    }
    return table->buf;
}

/* The start of the next run from *at* of characters that *bits* marks or beyond the BMP,
 * with *at* moved to its end; length when there is none. */
static Py_ssize_t
next_run(int kind, const void *data, Py_ssize_t length, const unsigned char *bits,
         Py_ssize_t *at)
{
#define MARKED(ch) ((ch) > 0xFFFF || (bits[(ch) >> 3] >> ((ch) & 7) & 1))
    Py_ssize_t i = *at;
    while (i < length && !MARKED(PyUnicode_READ(kind, data, i))) {
        i++;
    }
    Py_ssize_t start = i;
    while (i < length && MARKED(PyUnicode_READ(kind, data, i))) {
        i++;
    }
#undef MARKED
    *at = i;
    return start;
}

/* The [start, end) spans of the runs of characters that *table* (a bitmap of the BMP)
 * marks, and of characters beyond the BMP: what scrapy_simhash.analysis.nfkc finds with a regular
 * expression. */
PyObject *
speedups_marked_runs(PyObject *module, PyObject *args)
{
    PyObject *text;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*:marked_runs", &text, &table)) {
        return NULL;
    }
    const unsigned char *bits = bmp_bits(&table);
    PyObject *runs = bits == NULL ? NULL : PyList_New(0);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0, start;
    while (runs != NULL &&
           (start = next_run(PyUnicode_KIND(text), PyUnicode_DATA(text), length, bits, &at)) <
               length) {
        if (speedups_append_new(runs, Py_BuildValue("(nn)", start, at)) < 0) {
            Py_CLEAR(runs);
        }
    }
    PyBuffer_Release(&table);
    return runs;
}

/* What scrapy_simhash.analysis.nfkc.nfkc does with the runs that marked_runs finds: each run
 * normalised by normalize(form, piece) from the character before it, the text between runs
 * copied; the pieces joined. The Python loop over the runs cost as much as normalising
 * them (a Chinese text has a run at each full-width punctuation mark). *cache*, a dict or
 * None, keeps normalize(form, piece) for pieces of up to CACHED_PIECE characters: a call
 * costs twenty lookups, and a Chinese text repeats a few pieces ("的，") throughout. */
#define CACHED_PIECE 4

/* normalize(form, piece), from *cache* (a dict, or None for none) where it is there, else
 * called and kept there. */
static PyObject *
normalized(PyObject *piece, PyObject *normalize, PyObject *form, PyObject *cache)
{
    int cached = cache != Py_None && PyUnicode_GET_LENGTH(piece) <= CACHED_PIECE;
    if (cached) {
        PyObject *found = PyDict_GetItemWithError(cache, piece);
        if (found != NULL || PyErr_Occurred()) {
            return Py_XNewRef(found);
        }
    }
    PyObject *result = PyObject_CallFunctionObjArgs(normalize, form, piece, NULL);
    if (result != NULL && cached && PyDict_SetItem(cache, piece, result) < 0) {
        Py_CLEAR(result);
    }
    return result;
}
PyObject *
speedups_normalize_runs(PyObject *module, PyObject *args)
{
    PyObject *text, *normalize, *form, *cache = Py_None;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*OO|O:normalize_runs", &text, &table, &normalize, &form,
                          &cache)) {
        return NULL;
    }
    if (cache != Py_None && !PyDict_CheckExact(cache)) {
        PyBuffer_Release(&table);
        PyErr_SetString(PyExc_TypeError, "the cache must be a dict or None");
        return NULL;
    }
    const unsigned char *bits = bmp_bits(&table);
    PyObject *pieces = bits == NULL ? NULL : PyList_New(0), *result = NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0, copied = 0, start;
    if (pieces == NULL) {
        goto done;
    }
    while ((start = next_run(PyUnicode_KIND(text), PyUnicode_DATA(text), length, bits, &at)) <
           length) {
        if (start) { /* from the boundary before the run */
            start--;
        }
        PyObject *piece = PyUnicode_Substring(text, start, at);
        if (piece == NULL || speedups_append_new(pieces, PyUnicode_Substring(text, copied, start)) < 0 ||
            speedups_append_new(pieces, normalized(piece, normalize, form, cache)) < 0) {
            Py_XDECREF(piece);
            goto done;
        }
        Py_DECREF(piece);
        copied = at;
    }
    if (speedups_append_new(pieces, PyUnicode_Substring(text, copied, length)) == 0) {
        PyObject *empty = PyUnicode_New(0, 0);
        if (empty != NULL) {
            result = PyUnicode_Join(empty, pieces);
            Py_DECREF(empty);
        }
    }
done:
    Py_XDECREF(pieces);
    PyBuffer_Release(&table);
    return result;
}
