/* Compiled form of scrapy_simhash.words.count_words_python: the same words, the same Han
 * runs, for any text (tests/test_words.py compares the two on every code point).
 *
 * The regular expressions it replaces cost more than segmenting the text: the engine's
 * overhead per match and per position dominates on pages of many short words. One pass
 * over the characters here classifies each as Python's `re` does: a word character is
 * one for which str.isalnum() is true, or "_" (sre's SRE_UNI_IS_WORD); a Han character
 * is one of U+4E00..U+9FD5, the range jieba's dictionary covers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

static PyMethodDef methods[] = {
    {"count_words", count_words, METH_VARARGS,
     "count_words(text, counts) -> Han runs of text joined by line breaks; the other "
     "words of text counted into the dict counts."},
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
