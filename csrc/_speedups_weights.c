/* Weighted terms (scrapy_simhash.analysis.heaviest): heaviest, the TF-IDF top N. The SimHash of
 * weighted term hashes is in _speedups_combine.c. */
#include "_speedups.h"

#include <math.h>
#include <string.h>

/* The heaviest terms: what scrapy_simhash.analysis.heaviest._heaviest_python computes. *counts* maps
 * terms (str) to counts (int or float); *idf* maps terms to their IDF (float), and
 * new_idf(term) gives (and keeps) the IDF of a term missing from it. The weight of a term
 * is count * IDF as Python multiplies them (the int converted to double, as float.__mul__
 * does; an int too large raises OverflowError, as there); the result is the *top_n*
 * heaviest (term, weight) pairs, heaviest first, ties in weight by term in code point
 * order, as Python's sorts order them. None where Python's order is not a plain order of
 * doubles or Python's rules may differ: a NaN weight, a key that is not exactly a str, a
 * count or IDF of another type. */
typedef struct {
    double weight;
    /* The term's first three code points, each plus one (0: none), 21 bits each: the
     * order of these keys is the order of the terms, but where they are equal. */
    uint64_t prefix;
    PyObject *term;
} weighted_term;

static uint64_t
prefix_key(PyObject *term)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(term);
    int kind = PyUnicode_KIND(term);
    const void *data = PyUnicode_DATA(term);
    uint64_t key = 0;
    for (Py_ssize_t i = 0; i < 3; i++) {
        key = key << 21 | (i < length ? (uint64_t)PyUnicode_READ(kind, data, i) + 1 : 0);
    }
    return key;
}

/* Whether x comes before y: heavier, or as heavy and before it in code point order. */
static inline int
before(const weighted_term *x, const weighted_term *y)
{
    if (x->weight != y->weight) {
        return x->weight > y->weight;
    }
    if (x->prefix != y->prefix) {
        return x->prefix < y->prefix;
    }
    /* Distinct dict keys are never equal strings; an error cannot occur for str. */
    return PyUnicode_Compare(x->term, y->term) < 0;
}

/* Sorts items[0..n) by before(), with scratch space for n items: a merge sort, whose time
 * no order of the input can make quadratic (a page chooses the order of its terms). */
static void
sort_terms(weighted_term *items, weighted_term *scratch, Py_ssize_t n)
{
    const Py_ssize_t run = 16;
    for (Py_ssize_t start = 0; start < n; start += run) {
        Py_ssize_t end = start + run < n ? start + run : n;
        for (Py_ssize_t i = start + 1; i < end; i++) {
            weighted_term item = items[i];
            Py_ssize_t j = i;
            while (j > start && before(&item, &items[j - 1])) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = item;
        }
    }
    weighted_term *from = items, *to = scratch;
    for (Py_ssize_t width = run; width < n; width *= 2) {
        for (Py_ssize_t left = 0; left < n; left += 2 * width) {
            Py_ssize_t middle = left + width < n ? left + width : n;
            Py_ssize_t end = left + 2 * width < n ? left + 2 * width : n;
            Py_ssize_t i = left, j = middle, k = left;
            while (i < middle && j < end) {
                /* Stable: from the right half only when strictly before. */
                to[k++] = before(&from[j], &from[i]) ? from[j++] : from[i++];
            }
            while (i < middle) {
                to[k++] = from[i++];
            }
            while (j < end) {
                to[k++] = from[j++];
            }
        }
        weighted_term *swap = from;
        from = to;
        to = swap;
    }
    if (from != items) {
        memcpy(items, from, sizeof(weighted_term) * n);
    }
}

/* The top_n-th heaviest of the n weights of *terms* (n > top_n), with a min-heap of the
 * top_n heaviest so far in *heap* (room for top_n doubles): O(n log top_n) for any order
 * of the input, where a selection by partitioning can be made quadratic. */
static double
nth_heaviest(const weighted_term *terms, Py_ssize_t n, Py_ssize_t top_n, double *heap)
{
#define AT(k) heap[k]
    for (Py_ssize_t i = 0; i < n; i++) {
        double weight = terms[i].weight;
        Py_ssize_t k;
        if (i < top_n) { /* sift up */
            for (k = i; k > 0 && AT((k - 1) / 2) > weight; k = (k - 1) / 2) {
                AT(k) = AT((k - 1) / 2);
            }
            AT(k) = weight;
        }
        else if (weight > AT(0)) { /* replaces the lightest; sift down */
            for (k = 0;;) {
                Py_ssize_t child = 2 * k + 1;
                if (child >= top_n) {
                    break;
                }
                if (child + 1 < top_n && AT(child + 1) < AT(child)) {
                    child++;
                }
                if (AT(child) >= weight) {
                    break;
                }
                AT(k) = AT(child);
                k = child;
            }
            AT(k) = weight;
        }
    }
    return AT(0);
#undef AT
}

static double
number_as_double(PyObject *number, int *usable)
{
    if (PyFloat_CheckExact(number)) {
        return PyFloat_AS_DOUBLE(number);
    }
    if (PyLong_CheckExact(number) || PyBool_Check(number)) {
        return PyLong_AsDouble(number); /* -1.0 and an error when too large */
    }
    *usable = 0;
    return 0.0;
}

/* *item*'s weight (it holds the term's count) times its IDF: idf[term], or new_idf(term).
 * 1 when done, 0 when Python is to decide (a NaN weight), -1 on error. */
static int
weigh(weighted_term *item, PyObject *idf, PyObject *new_idf)
{
    PyObject *value = PyDict_GetItemWithError(idf, item->term);
    if (value != NULL) {
        Py_INCREF(value);
    }
    else if (PyErr_Occurred() || (value = PyObject_CallOneArg(new_idf, item->term)) == NULL) {
        return -1;
    }
    double d = PyFloat_CheckExact(value) ? PyFloat_AS_DOUBLE(value) : NAN;
    Py_DECREF(value);
    item->weight *= d;
    return isnan(item->weight) ? 0 : 1;
}

PyObject *
speedups_heaviest(PyObject *module, PyObject *args)
{
    PyObject *counts, *idf, *new_idf;
    Py_ssize_t top_n;
    double bound = NAN;
    if (!PyArg_ParseTuple(args, "O!O!On|d:heaviest", &PyDict_Type, &counts, &PyDict_Type, &idf,
                          &new_idf, &top_n, &bound)) {
        return NULL;
    }
    if (top_n < 1) {
        PyErr_SetString(PyExc_ValueError, "top_n must be at least 1");
        return NULL;
    }
    Py_ssize_t n = PyDict_GET_SIZE(counts);
    weighted_term *terms = PyMem_Malloc(sizeof(weighted_term) * (n ? n : 1));
    weighted_term *scratch = PyMem_Malloc(sizeof(weighted_term) * (n ? n : 1));
    PyObject *result = NULL;
    /* The array holds the references of terms[0, weighed) and of terms[deferred, n): the
     * terms weighed, and those counted at most once, whose IDF is looked up only if they
     * can make the cut (most of a page's distinct terms occur once). */
    Py_ssize_t size = n, weighed = 0, deferred = n;
    if (terms == NULL || scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t position = 0;
    PyObject *term, *count;
    int usable = 1;
    while (PyDict_Next(counts, &position, &term, &count)) {
        if (weighed == deferred) { /* the dict grew while new_idf ran */
            usable = 0;
            break;
        }
        if (!PyUnicode_CheckExact(term)) {
            usable = 0;
            break;
        }
        Py_INCREF(count);
        double c = number_as_double(count, &usable);
        Py_DECREF(count);
        if (!usable) {
            break;
        }
        if (c == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        /* Deferred only with a bound, and for a count in [0, 1], where c * IDF <= c * bound
         * holds for every IDF up to the bound (a negative count would turn it around). */
        int defer = !isnan(bound) && c >= 0.0 && c <= 1.0;
        weighted_term *item = defer ? &terms[--deferred] : &terms[weighed++];
        item->term = Py_NewRef(term);
        item->weight = c;
        if (defer) {
            continue;
        }
        int weighted = weigh(item, idf, new_idf);
        if (weighted <= 0) {
            usable = weighted;
            if (weighted < 0) {
                goto done;
            }
            break;
        }
    }
    if (!usable || weighed + (n - deferred) != PyDict_GET_SIZE(counts)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* A deferred term weighs at most its count times the bound: below the top_n-th heaviest
     * weight of the terms weighed so far, it is below the final cut, which only rises as
     * terms are added, and cannot make it. The others are weighed. */
    double lightest_kept = -INFINITY;
    if (deferred < n && weighed >= top_n) {
        lightest_kept = nth_heaviest(terms, weighed, top_n, (double *)scratch);
    }
    while (deferred < n) {
        weighted_term item = terms[deferred++];
        if (item.weight * bound < lightest_kept) {
            Py_DECREF(item.term);
            continue;
        }
        terms[weighed++] = item; /* weighed < deferred: no live entry is overwritten */
        int weighted = weigh(&terms[weighed - 1], idf, new_idf);
        if (weighted <= 0) {
            if (weighted == 0) {
                result = Py_NewRef(Py_None);
            }
            goto done;
        }
    }
    n = weighed;
    /* Only the terms that can make the cut are sorted, as in Python: those at least as
     * heavy as the top_n-th heaviest weight (ties at the cut included). The order is total
     * (terms are distinct), so the first top_n of them are the first top_n of all. */
    Py_ssize_t candidates = n;
    if (n > top_n) {
        /* The scratch space (n terms) holds the heap (top_n doubles) until the sort. */
        double cut = nth_heaviest(terms, n, top_n, (double *)scratch);
        candidates = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (terms[i].weight >= cut) { /* swapped: the array holds every reference */
                weighted_term swap = terms[candidates];
                terms[candidates++] = terms[i];
                terms[i] = swap;
            }
        }
    }
    for (Py_ssize_t i = 0; i < candidates; i++) {
        terms[i].prefix = prefix_key(terms[i].term);
    }
    sort_terms(terms, scratch, candidates);
    Py_ssize_t kept = candidates < top_n ? candidates : top_n;
    result = PyList_New(kept);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < kept; i++) {
        PyObject *weight = PyFloat_FromDouble(terms[i].weight);
        PyObject *pair = weight == NULL ? NULL : PyTuple_Pack(2, terms[i].term, weight);
        Py_XDECREF(weight);
        if (pair == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, pair);
    }
done:
    if (terms != NULL) {
        for (Py_ssize_t i = 0; i < weighed; i++) {
            Py_DECREF(terms[i].term);
        }
        for (Py_ssize_t i = deferred; i < size; i++) {
            Py_DECREF(terms[i].term);
        }
    }
    PyMem_Free(terms);
    PyMem_Free(scratch);
    return result;
}
