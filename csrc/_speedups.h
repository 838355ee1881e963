/* What the files of the C accelerator, scrapy_simhash._speedups, share: the character
 * classes of Python's `re` that its searches reproduce, two helpers, and the functions
 * each file gives the module (see _speedups.c for the module and its method table). */
#ifndef SCRAPY_SIMHASH_SPEEDUPS_H
#define SCRAPY_SIMHASH_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
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

/* A character of a script written without spaces (Han, kana, Hangul syllables): a word
 * of its own in a paragraph anchor's size (the ranges of anchors.py's _UNSPACED). */
static inline int
is_unspaced(Py_UCS4 ch)
{
    return (ch >= 0x4E00 && ch <= 0x9FFF) || (ch >= 0x3040 && ch <= 0x30FF) ||
           (ch >= 0x3400 && ch <= 0x4DBF) || (ch >= 0xAC00 && ch <= 0xD7AF) ||
           (ch >= 0xF900 && ch <= 0xFAFF);
}

/* Py_UNICODE_ISSPACE(ch), without its look-up for the characters that cannot be
 * whitespace (the tests check that none beyond these ranges is). */
static inline int
is_space(Py_UCS4 ch)
{
    if (ch < 0x80) {
        return Py_UNICODE_ISSPACE(ch);
    }
    if (ch < 0x2000) {
        return ch == 0x85 || ch == 0xA0 || ch == 0x1680;
    }
    return ch <= 0x3000 && Py_UNICODE_ISSPACE(ch);
}

/* Appends *item* (a new reference, or NULL after an error) to *list*, and lets go of it. */
int speedups_append_new(PyObject *list, PyObject *item);
/* counts[word] += 1, for a dict (or Counter) of ints. */
int speedups_add_one(PyObject *counts, PyObject *word, PyObject *one);

/* _speedups_words.c */
PyObject *speedups_count_words(PyObject *module, PyObject *args);
PyObject *speedups_count_long_words(PyObject *module, PyObject *args);
/* _speedups_runs.c */
PyObject *speedups_marked_runs(PyObject *module, PyObject *args);
PyObject *speedups_normalize_runs(PyObject *module, PyObject *args);
/* _speedups_weights.c */
PyObject *speedups_heaviest(PyObject *module, PyObject *args);
/* _speedups_combine.c */
PyObject *speedups_combine(PyObject *module, PyObject *args);
PyObject *speedups_combine_cached(PyObject *module, PyObject *args);
/* _speedups_case.c */
PyObject *speedups_lower(PyObject *module, PyObject *text);
/* _speedups_stop_words.c */
PyObject *speedups_remove_stop_words(PyObject *module, PyObject *args);
/* _speedups_attribution.c */
PyObject *speedups_contains_any(PyObject *module, PyObject *args);
PyObject *speedups_line_starts(PyObject *module, PyObject *args);

/* _speedups_anchors.c */
PyObject *speedups_unit_sizes(PyObject *module, PyObject *args);
PyObject *speedups_anchor_form(PyObject *module, PyObject *line);
PyObject *speedups_sketch_form(PyObject *module, PyObject *line);
/* The anchor form of the *length* characters of the str *text* from *start*. */
PyObject *speedups_form_of(PyObject *text, Py_ssize_t start, Py_ssize_t length);

/* _speedups_shingles.c */
PyObject *speedups_shingles(PyObject *module, PyObject *args);
PyObject *speedups_text_shingles(PyObject *module, PyObject *args);

#endif
