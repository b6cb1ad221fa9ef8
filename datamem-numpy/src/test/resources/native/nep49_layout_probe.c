/*
 * The layout of PyDataMem_Handler and PyDataMemAllocator as NumPy's own header declares them,
 * compiled at test time against Python.h (python3-dev) and NumPy's headers (python3-numpy).
 * HandlerLayoutTest compares it with PyDataMem.HANDLER_LAYOUT.
 */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/ndarraytypes.h>
#include <stddef.h>

/* index: 0 sizeof(PyDataMem_Handler), 1 offsetof name, 2 sizeof name, 3 offsetof version,
   4 offsetof allocator, 5 sizeof(PyDataMemAllocator), 6 ctx, 7 malloc, 8 calloc, 9 realloc,
   10 free (offsets within PyDataMemAllocator), 11 alignof(PyDataMem_Handler) */
long probe_layout(int index) {
    switch (index) {
    case 0: return (long) sizeof(PyDataMem_Handler);
    case 1: return (long) offsetof(PyDataMem_Handler, name);
    case 2: return (long) sizeof(((PyDataMem_Handler *) 0)->name);
    case 3: return (long) offsetof(PyDataMem_Handler, version);
    case 4: return (long) offsetof(PyDataMem_Handler, allocator);
    case 5: return (long) sizeof(PyDataMemAllocator);
    case 6: return (long) offsetof(PyDataMemAllocator, ctx);
    case 7: return (long) offsetof(PyDataMemAllocator, malloc);
    case 8: return (long) offsetof(PyDataMemAllocator, calloc);
    case 9: return (long) offsetof(PyDataMemAllocator, realloc);
    case 10: return (long) offsetof(PyDataMemAllocator, free);
    case 11: return (long) _Alignof(PyDataMem_Handler);
    default: return -1;
    }
}

/* Reads a handler through NumPy's type, as NumPy does: the version, and the name copied out. */
int probe_version(const PyDataMem_Handler *handler) {
    return handler->version;
}

void probe_name(const PyDataMem_Handler *handler, char *out, size_t size) {
    snprintf(out, size, "%s", handler->name);
}
