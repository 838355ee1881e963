/* shingles(hashes, span) -> the sorted distinct hashes of every run of *span* consecutive
 * word hashes (a text shorter than a run is one run): the compiled twin of
 * scrapy_simhash.analysis.sketch.combine_shingles. A run's hash folds its words' 64-bit
 * hashes into one with an odd multiplier and splitmix64's finaliser after each word, so
 * that every bit depends on every word and on their order.
 *
 * text_shingles(form, span, limit) -> (runs, the smallest *limit* distinct hashes) for the
 * words of
 * *form* (a text as anchors compare it: words separated by single spaces), each word
 * hashed with MurmurHash3 x64-128 of its UTF-8 as mmh3.hash64 does (its first half); a
 * Han, kana or Hangul character is a word of its own. The
 * twin of scrapy_simhash.analysis.sketch.shingle_hashes without a secret. None for a text
 * that is not valid UTF-8 (a lone surrogate): Python decides.
 */
#include <string.h>

#include "_speedups.h"

static const uint64_t ODD[2] = {0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL};

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static int
compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static inline uint64_t
rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    return k ^ (k >> 33);
}

static inline uint64_t
read64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i]; /* little-endian, whatever the machine's order */
    }
    return v;
}

/* The first half of MurmurHash3_x64_128 of data with seed 0 (mmh3.hash64(data)[0]). */
static uint64_t
murmur3_64(const uint8_t *data, size_t len)
{
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0;
    size_t blocks = len / 16;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t k1 = read64(data + 16 * i), k2 = read64(data + 16 * i + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27) + h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31) + h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = data + 16 * blocks;
    size_t rest = len & 15;
    uint64_t k1 = 0, k2 = 0;
    for (size_t i = rest; i > 8; i--) {
        k2 ^= (uint64_t)tail[i - 1] << (8 * (i - 9));
    }
    if (rest > 8) {
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--) {
        k1 ^= (uint64_t)tail[i - 1] << (8 * (i - 1));
    }
    if (rest > 0) {
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= len;
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    return h1 + h2;
}

/* Whether the code point of a 3-byte UTF-8 sequence is a word of its own. */
static int
unspaced(uint32_t c)
{
    return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) ||
           (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) ||
           (c >= 0xf900 && c <= 0xfaff);
}

/* The hash of a Han, kana or Hangul character (3 bytes of UTF-8), each computed once per
 * process: a Chinese page is a word per character, of a few thousand distinct ones. */
static uint64_t unspaced_hashes[0x10000];
static uint8_t unspaced_known[0x10000 / 8];

static uint64_t
unspaced_hash(const uint8_t *s)
{
    uint32_t c = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
                 (uint32_t)(s[2] & 0x3f);
    if (!(unspaced_known[c >> 3] & (1 << (c & 7)))) {
        unspaced_hashes[c] = murmur3_64(s, 3);
        unspaced_known[c >> 3] |= (uint8_t)(1 << (c & 7));
    }
    return unspaced_hashes[c];
}

/* Sorts the runs' hashes of words[0..n) into words, distinct; returns how many. */
static Py_ssize_t
fold_runs(uint64_t *words, Py_ssize_t n, Py_ssize_t span);

/* The runs' hashes of words[0..n) hashed in place (as fold_runs), not sorted; how many. */
static Py_ssize_t
hash_runs(uint64_t *words, Py_ssize_t n, Py_ssize_t span);

/* Sorts the distinct ones of the *count* values into words; returns how many. */
static Py_ssize_t
sort_distinct(uint64_t *words, Py_ssize_t count);

/* Leaves in words, sorted and distinct, at least the smallest *limit* distinct runs'
 * hashes (all of them if fewer): only the values below a power of two that holds enough
 * of them are sorted, not all (a long page has a million runs). Returns how many. */
static Py_ssize_t
smallest_runs(uint64_t *words, Py_ssize_t n, Py_ssize_t span, Py_ssize_t limit)
{
    Py_ssize_t runs = hash_runs(words, n, span);
    Py_ssize_t below[65] = {0}; /* below[z]: values with at least z leading zeros */
    for (Py_ssize_t i = 0; i < runs; i++) {
        uint64_t v = words[i];
        int zeros = v == 0 ? 64 : __builtin_clzll(v);
        below[zeros]++;
    }
    for (int z = 63; z >= 0; z--) {
        below[z] += below[z + 1];
    }
    /* Twice the limit with repeats: enough distinct values unless the text repeats itself
     * a lot; then a lower power of two is tried. */
    for (int z = 64; z >= 0; z--) {
        if (z > 0 && below[z] < 2 * limit + 2) {
            continue;
        }
        uint64_t bound = z == 0 ? UINT64_MAX : (UINT64_MAX >> z);
        Py_ssize_t kept = 0;
        uint64_t *picked = words + runs; /* scratch: see the caller's allocation */
        for (Py_ssize_t i = 0; i < runs; i++) {
            if (words[i] <= bound) {
                picked[kept++] = words[i];
            }
        }
        kept = sort_distinct(picked, kept);
        if (kept > limit || z == 0) {
            memmove(words, picked, sizeof(uint64_t) * (size_t)kept);
            return kept;
        }
    }
    return 0;
}

/* words[0..count) as a list of at most limit ints (frees words). */
static PyObject *
as_list(uint64_t *words, Py_ssize_t count, Py_ssize_t limit);

PyObject *
speedups_text_shingles(PyObject *module, PyObject *args)
{
    PyObject *text;
    Py_ssize_t span, limit;
    if (!PyArg_ParseTuple(args, "Unn", &text, &span, &limit)) {
        return NULL;
    }
    if (span < 1 || span > 3) {
        PyErr_SetString(PyExc_ValueError, "span must be 1 to 3");
        return NULL;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const uint8_t *s = (const uint8_t *)utf8;
    /* A word per byte at most, and as many again of scratch for smallest_runs. */
    uint64_t *words = PyMem_Malloc(2 * sizeof(uint64_t) * (size_t)(size + 1));
    if (words == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t n = 0, start = -1;
    for (Py_ssize_t i = 0; i <= size; i++) {
        int single = 0;
        if (i < size && s[i] >= 0xe0 && s[i] < 0xf0 && i + 2 < size) {
            uint32_t c = ((uint32_t)(s[i] & 0x0f) << 12) | ((uint32_t)(s[i + 1] & 0x3f) << 6) |
                         (uint32_t)(s[i + 2] & 0x3f);
            single = unspaced(c);
        }
        if (i == size || s[i] == ' ' || single) {
            if (start >= 0) {
                const uint8_t *word = s + start;
                Py_ssize_t length = i - start;
                words[n++] = murmur3_64(word, (size_t)length);
                start = -1;
            }
            if (single) {
                words[n++] = unspaced_hash(s + i);
                i += 2;
            }
        }
        else if (start < 0) {
            start = i;
        }
    }
    Py_ssize_t runs = n == 0 ? 0 : (span > n ? 1 : n - span + 1);
    Py_ssize_t count = smallest_runs(words, n, span, limit);
    PyObject *kept = as_list(words, count, limit);
    if (kept == NULL) {
        return NULL;
    }
    return Py_BuildValue("(nN)", runs, kept);
}

PyObject *
speedups_shingles(PyObject *module, PyObject *args)
{
    PyObject *hashes;
    Py_ssize_t span;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &hashes, &span)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(hashes);
    if (span < 1 || span > 3) {
        PyErr_SetString(PyExc_ValueError, "span must be 1 to 3");
        return NULL;
    }
    uint64_t *words = PyMem_Malloc(sizeof(uint64_t) * (size_t)(n + 1));
    if (words == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        words[i] = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(hashes, i));
        if (words[i] == (uint64_t)-1 && PyErr_Occurred()) {
            PyMem_Free(words);
            return NULL;
        }
    }
    return as_list(words, fold_runs(words, n, span), n + 1);
}

static Py_ssize_t
hash_runs(uint64_t *words, Py_ssize_t n, Py_ssize_t span)
{
    if (n == 0) {
        return 0;
    }
    if (span > n) {
        span = n;
    }
    Py_ssize_t runs = n - span + 1;
    for (Py_ssize_t i = 0; i < runs; i++) {
        uint64_t x = words[i];
        for (Py_ssize_t j = 1; j < span; j++) {
            x = mix(x * ODD[j - 1] + words[i + j]);
        }
        words[i] = mix(x); /* words[i] is not read again: runs start after it */
    }
    return runs;
}

static Py_ssize_t
sort_distinct(uint64_t *words, Py_ssize_t count)
{
    qsort(words, (size_t)count, sizeof(uint64_t), compare);
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i == 0 || words[i] != words[i - 1]) {
            words[kept++] = words[i];
        }
    }
    return kept;
}

static Py_ssize_t
fold_runs(uint64_t *words, Py_ssize_t n, Py_ssize_t span)
{
    return sort_distinct(words, hash_runs(words, n, span));
}

static PyObject *
as_list(uint64_t *words, Py_ssize_t count, Py_ssize_t limit)
{
    Py_ssize_t size = count < limit ? count : limit;
    PyObject *result = PyList_New(size < 0 ? 0 : size);
    for (Py_ssize_t i = 0; result != NULL && i < size; i++) {
        PyObject *value = PyLong_FromUnsignedLongLong(words[i]);
        if (value == NULL) {
            Py_CLEAR(result);
        }
        else {
            PyList_SET_ITEM(result, i, value);
        }
    }
    PyMem_Free(words);
    return result;
}
