/* The optional C accelerator, scrapy_simhash._speedups: the module and its method table,
 * and the two helpers its files share. Each function is the compiled form of a pure-Python
 * twin next to the code that calls it, with the same results for any input (the tests
 * compare the two): count_words and count_long_words (_speedups_words.c) with
 * scrapy_simhash.analysis.words, marked_runs and normalize_runs (_speedups_runs.c) with
 * scrapy_simhash.analysis.nfkc, heaviest (_speedups_weights.c) with scrapy_simhash.analysis.heaviest,
 * combine and combine_cached (_speedups_combine.c) with scrapy_simhash.analysis.fingerprint's
 * numpy combine and simhash(), contains_any and line_starts
 * (_speedups_attribution.c) with scrapy_simhash.analysis.attribution, remove_stop_words
 * (_speedups_stop_words.c) with scrapy_simhash.analysis.function_words, lower (_speedups_case.c)
 * with str.lower (scrapy_simhash.analysis.words), unit_sizes and anchor_form (_speedups_anchors.c)
 * with scrapy_simhash.analysis.anchors, shingles
 * (_speedups_shingles.c) with scrapy_simhash.analysis.sketch.
 *
 * The regular expressions and Python loops they replace cost more than segmenting the
 * text: the engine's overhead per match and per position, and the interpreter's per
 * item, dominate on pages of many short words. The passes over the characters here
 * classify each as Python's `re` does: a word character is one for which str.isalnum() is
 * true, or "_" (sre's SRE_UNI_IS_WORD); a Han character is one of U+4E00..U+9FD5, the
 * range jieba's dictionary covers.
 */
#include "_speedups.h"

/* Appends *item* (a new reference, or NULL after an error) to *list*, and lets go of it. */
int
speedups_append_new(PyObject *list, PyObject *item)
{
    if (item == NULL) {
        return -1;
    }
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

/* counts[word] += 1, for a dict (or Counter) of ints. */
int
speedups_add_one(PyObject *counts, PyObject *word, PyObject *one)
{
    PyObject *old = PyDict_GetItemWithError(counts, word);
    if (old == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        return PyDict_SetItem(counts, word, one);
    }
    /* Held: a count's __add__ may be Python code that changes the dict. */
    Py_INCREF(old);
    PyObject *sum = PyNumber_Add(old, one);
    Py_DECREF(old);
    if (sum == NULL) {
        return -1;
    }
    int status = PyDict_SetItem(counts, word, sum);
    Py_DECREF(sum);
    return status;
}

static PyMethodDef methods[] = {
    {"normalize_runs", speedups_normalize_runs, METH_VARARGS,
     "normalize_runs(text, table, normalize, form, cache=None) -> text with each run of "
     "characters marked in table (or beyond the BMP) replaced by normalize(form, run), from "
     "the character before it; short runs' results kept in the dict cache."},
    {"contains_any", speedups_contains_any, METH_VARARGS,
     "contains_any(text, needles) -> whether text holds any of the tuple of str needles."},
    {"line_starts", speedups_line_starts, METH_VARARGS,
     "line_starts(text, keywords) -> the starts of the lines that can begin an attribution."},
    {"heaviest", speedups_heaviest, METH_VARARGS,
     "heaviest(counts, idf, new_idf, top_n, bound=nan) -> the top_n heaviest (term, count * "
     "IDF) pairs, heaviest first, ties by term; None where the pure-Python form is to decide. "
     "With a bound no less than any IDF, terms counted at most once that cannot make the cut "
     "are not looked up."},
    {"unit_sizes", speedups_unit_sizes, METH_VARARGS,
     "unit_sizes(units, min_chars) -> (words of all units, [(size, unit) for each unit of at "
     "least min_chars characters]): the sizes in words of a text's anchor units."},
    {"anchor_form", speedups_anchor_form, METH_O,
     "anchor_form(line) -> line case-folded, with punctuation and symbols dropped and runs of "
     "them and of whitespace made one space, none at either end."},
    {"sketch_form", speedups_sketch_form, METH_O,
     "sketch_form(line) -> anchor_form(line) with its numbers as they are."},
    {"count_long_words", speedups_count_long_words, METH_VARARGS,
     "count_long_words(words, counts): counts[word] += 1 for each word of the list words "
     "other than single characters."},
    {"combine", speedups_combine, METH_VARARGS,
     "combine(rows, weights) -> the SimHash of 8-byte little-endian hashes and their "
     "weights, or None for a weight out of range."},
    {"combine_cached", speedups_combine_cached, METH_VARARGS,
     "combine_cached(pairs, cache) -> the SimHash of a list of (term, weight) pairs, each "
     "term's 8-byte hash read from the dict cache; None where the caller is to compute it "
     "(a term not in the cache, a pair of other types, a weight out of range, no pairs)."},
    {"marked_runs", speedups_marked_runs, METH_VARARGS,
     "marked_runs(text, table) -> [(start, end), ...] of the runs of characters marked "
     "in table (8192 bytes, a bit per BMP code point) or beyond the BMP."},
    {"lower", speedups_lower, METH_O, "lower(text) -> text.lower()"},
    {"shingles", speedups_shingles, METH_VARARGS,
     "shingles(hashes, span) -> the sorted distinct hashes of every run of span consecutive "
     "64-bit word hashes (a list shorter than a run is one run)."},
    {"text_shingles", speedups_text_shingles, METH_VARARGS,
     "text_shingles(form, span, limit) -> (count, the smallest limit) of shingles() of the "
     "MurmurHash3 hashes of the words of form (single spaces between words; a Han, kana or "
     "Hangul character a word of its own); None for a text that is not "
     "valid UTF-8."},
    {"remove_stop_words", speedups_remove_stop_words, METH_VARARGS,
     "remove_stop_words(counts, masks, min_hits) -> True once the stop words of the text's "
     "language are removed from counts; False, counts untouched, where Python is to decide."},
    {"count_words", speedups_count_words, METH_VARARGS,
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
